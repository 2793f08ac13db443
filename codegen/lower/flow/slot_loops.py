"""Which planned calls take a join event per micro-batch (:mod:`~codegen.lower.flow.item_slots`), and which
statements read their results as one micro-batch's item.

A call qualifies when its statement stands directly in the body of a ``for i in range(n)`` loop at the top of the
function (no ``break`` or ``continue`` of its own and no ``return``, ``loop_exits.py``; ``i`` not rebound, ``n`` a
name bound once before the loop, ``range`` not rebound), binds its result only as items ``xs[i]`` of containers only
the function reaches (``item_stores.py``), is its callee's only call in the function, reads its guard the same at
every call, and some later loop over the same ``range(n)`` reads its result as ``xs[j]``, ``j`` that loop's
variable. A later loop whose body reads the item directly (not under an ``if``) and never leaves early waits for
every micro-batch's call (a *sweep*): the call is joined after it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from codegen.index.walked import walked_of
from codegen.lower.flow.item_slots import SlotLoop, Slots
from codegen.lower.flow.item_stores import containers
from codegen.lower.flow.loop_count import RangeLoop, range_loop
from codegen.lower.flow.loop_exits import leaves_early
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import COMPOUND
from codegen.lower.flow.transfer import SiteView

__all__ = ["item_slots"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def item_slots(fn: _Function, sites: Sequence[Site], views: dict[ast.stmt, SiteView]) -> Slots:
    """The calls of ``sites`` that record a join event per iteration parity, and the item reads of their results."""
    found = {s.index: loop for s in sites if (loop := _slot_loop(fn, s, sites, views)) is not None}
    reads: dict[ast.stmt, dict[int, tuple[str, frozenset[str]]]] = {}
    sweeps: dict[ast.stmt, frozenset[int]] = {}
    for index, slot in found.items():
        for sweep in _sweeps(fn, slot):
            var = sweep.target.id  # type: ignore[attr-defined]
            for stmt in (s for s in walked_of(sweep, ast.stmt) if not isinstance(s, COMPOUND)):
                read = _item_reads(stmt, slot.items, var)
                if read:
                    reads.setdefault(stmt, {})[index] = (var, read)
            every = any(index in reads.get(stmt, {}) for stmt in sweep.body)  # each iteration waits for its item
            if every and not leaves_early(sweep):
                sweeps[sweep] = sweeps.get(sweep, frozenset()) | {index}
    waited = {i for found_reads in reads.values() for i in found_reads}
    return Slots(found, reads, sweeps).without(set(found) - waited)  # a call no item read waits for keeps one event


def _slot_loop(fn: _Function, site: Site, sites: Sequence[Site], views: dict[ast.stmt, SiteView]) -> SlotLoop | None:
    """``site``'s loop when its call may take a slotted join event (the module docstring's conditions)."""
    loop = next((s for s in fn.body if isinstance(s, ast.For) and site.stmt in s.body), None)
    counted = _counted(loop)
    if counted is None or not counted.bound_once(fn) or _rebinds(fn, "range"):
        return None
    loop, var = counted.loop, counted.index
    same = [s for s in sites if s.callee.key == site.callee.key]  # type: ignore[attr-defined]
    if len(same) > 1 or views[site.stmt].guarded or _rebinds(loop, var, body=loop.body):
        return None
    if leaves_early(loop):  # an inner loop's own break or continue leaves only that loop
        return None
    items = _stored_items(site.stmt, containers(fn), var)
    return SlotLoop(loop=loop, stmt=site.stmt, var=var, count=counted.named, items=items) if items else None


def _counted(loop: ast.For | None) -> RangeLoop | None:
    """``for i in range(n)`` of a name ``n``, with no ``else`` (``loop_count.py`` reads it)."""
    found = range_loop(loop) if loop is not None and not loop.orelse else None
    return found if found is not None and found.named else None


def _rebinds(node: ast.AST, name: str, body: Iterable[ast.stmt] | None = None) -> bool:
    scope = [node] if body is None else list(body)
    return any(n.id == name and not isinstance(n.ctx, ast.Load) for s in scope for n in walked_of(s, ast.Name))


def _stored_items(stmt: ast.stmt, owned: frozenset[str], var: str) -> frozenset[str]:
    """The containers ``stmt`` stores the call's result into, when it binds it only as their items at ``var``."""
    if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
        return frozenset()
    targets: list[ast.expr] = list(stmt.targets)
    found: set[str] = set()
    while targets:
        target = targets.pop()
        if isinstance(target, ast.Tuple):
            targets.extend(target.elts)
        elif _item_at(target, owned, var):
            found.add(target.value.id)  # type: ignore[attr-defined]
        else:
            return frozenset()
    return frozenset(found)


def _item_at(node: ast.AST, owned: frozenset[str], var: str) -> bool:
    """``node`` is ``xs[var]`` for a container ``xs`` only the function reaches (``item_stores.py``)."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in owned):
        return False
    return isinstance(node.slice, ast.Name) and node.slice.id == var


def _sweeps(fn: _Function, slot: SlotLoop) -> list[ast.For]:
    """The loops after the call's loop over the same ``range(n)`` whose variable their body does not rebind."""
    after = fn.body[fn.body.index(slot.loop) + 1 :]
    loops = [loop for stmt in after for loop in walked_of(stmt, ast.For)]
    counted = [found for loop in loops if (found := _counted(loop)) is not None and found.named == slot.count]
    return [found.loop for found in counted if not _rebinds(found.loop, found.index, body=found.loop.body)]


def _item_reads(stmt: ast.stmt, items: frozenset[str], var: str) -> frozenset[str]:
    """The containers of ``items`` that ``stmt`` names only as ``xs[var]``."""
    at = {id(n.value) for n in walked_of(stmt, ast.Subscript) if _item_at(n, items, var)}
    named = [n for n in walked_of(stmt, ast.Name) if n.id in items]
    return frozenset(n.id for n in named) - {n.id for n in named if id(n) not in at}
