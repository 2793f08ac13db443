"""Which staging call of a caller takes a join event per parity of its loop's iterations (``loop_parity.py`` says
what the slots mean and why they are exact).

A call qualifies when its target has events; it is its callee's only call in a top-level ``for`` loop of the function
(no ``else``; no ``break`` or ``continue`` of its own nor ``return``, ``loop_exits.py``: an inner loop's ``break``
leaves only that loop; its index and count known: ``last_iteration.counted``), standing in the loop's body or in
an ``if`` there whose test the last iteration knows false; the callee's one other call in the function is a
statement of its body before the loop; both read one guard the same at every call, record one join
event of their own (no argument only a call binds: ``shared_join.py``), write none of the caller's names in place and
are no micro-batch's slotted call (``item_slots.py``); and the names the loop's call binds are read only by plain
copies (``w = w_next``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.index.walked import walked
from codegen.lower.flow.last_iteration import LastIterations, counted, false_in_last
from codegen.lower.flow.loop_count import range_loop
from codegen.lower.flow.loop_exits import leaves_early
from codegen.lower.flow.loop_parity import Parity
from codegen.lower.flow.sites import Site
from codegen.lower.flow.transfer import SiteView

__all__ = ["Asked", "loop_parity"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def loop_parity(
    fn: _Function, sites: list[Site], views: dict[ast.stmt, SiteView], asked: Asked, last: LastIterations
) -> Parity | None:
    """The first call of ``sites`` that takes a join event per parity of its loop's iterations (None: none does)."""
    if not asked.events:
        return None
    return next((found for late in sites if (found := _parity(fn, late, sites, views, asked, last))), None)


@attrs.frozen(kw_only=True)
class Asked:
    """What the rule asks of the caller: whether its target has events, its ``self`` and layer lists, how its calls
    relate (``relations.CallRelations``) and which event each records."""

    events: bool
    receiver: str | None
    sized: frozenset[str]
    relations: object
    join_of: Callable[[Site], object]


def _parity(
    fn: _Function, late: Site, sites: list[Site], views: dict[ast.stmt, SiteView], asked: Asked, last: LastIterations
) -> Parity | None:
    loop = next((s for s in fn.body if isinstance(s, ast.For) and any(node is late.stmt for node in walked(s))), None)
    if loop is None or loop.orelse or leaves_early(loop):
        return None
    index, count = counted(loop, asked.receiver, asked.sized)
    skipped = _skipped(loop, late.stmt, asked)
    same = [s for s in sites if s.callee.key == late.callee.key and s is not late]  # type: ignore[attr-defined]
    if not index or skipped is None or len(same) != 1 or same[0].stmt not in fn.body:
        return None
    first = same[0]
    if fn.body.index(first.stmt) > fn.body.index(loop) or not _alike(first, late, views, asked):
        return None
    if not _copied(fn, views[late.stmt].names):
        return None
    return Parity(
        first=first.index,
        late=late.index,
        loop=loop,
        index=index,
        count=count,
        skipped=skipped,
        entered=loop in last.entered,
        stable=_stable(fn, loop, count),
        late_end=late.stmt.end_lineno or late.stmt.lineno,
        late_names=views[late.stmt].names,
    )


def _skipped(loop: ast.For, stmt: ast.stmt, asked: Asked) -> bool | None:
    """False: ``stmt`` stands in the loop's body; True: in the body of an ``if`` there that the last iteration knows
    false; None: elsewhere."""
    if any(s is stmt for s in loop.body):
        return False
    tests = false_in_last(loop, asked.receiver, asked.sized)
    return True if any(any(s is stmt for s in test.body) for test in tests) else None


def _alike(first: Site, late: Site, views: dict[ast.stmt, SiteView], asked: Asked) -> bool:
    """One guard read the same at every call, one join event of their own, no caller's name written in place, not
    a micro-batch's slotted call, no argument that only a call binds (``shared_join.py``)."""
    relations = asked.relations
    keys, slots, only = relations.keys, relations.slots, relations.made_only_by  # type: ignore[attr-defined]
    pair = (views[first.stmt], views[late.stmt])
    if any(v.guarded or v.writes for v in pair) or keys[first.index] != keys[late.index]:
        return False
    if {first.index, late.index} & set(slots.sites):
        return False
    bound = any(a.bare and a.name in only for s in (first, late) for a in s.args)
    return not bound and asked.join_of(first) == asked.join_of(late)


def _copied(fn: _Function, names: frozenset[str]) -> bool:
    """Every read of ``names`` in ``fn`` is a plain copy into one name (``w = w_next``)."""
    plain = [s for s in walked(fn) if isinstance(s, ast.Assign) and len(s.targets) == 1]
    copies = {id(s.value) for s in plain if isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Name)}
    reads = [n for n in walked(fn) if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)]
    return all(id(n) in copies for n in reads)


def _stable(fn: _Function, loop: ast.For, count: str) -> bool:
    """The count is spelled with the same value after the loop: a constant, a layer list's length (fixed after
    ``__init__``), or a name bound once."""
    found = range_loop(loop)
    if found is None:
        return count.startswith("len(")
    return found.constant is not None or found.bound_once(fn)
