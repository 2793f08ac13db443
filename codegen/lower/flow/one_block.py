"""A call under ``if <guard>:`` and a later call on its stream share one ``with``, across statements the guard
rules out.

``if self.multistream: q, s = self.quant(h, True)``, then ``if q is None: q, s = quant(h)``, then ``y =
self.side(q, s)`` guarded by the same flag: where the flag holds, the quantization ran on the side stream and
the ``is None`` statement does not run (``guard_paths.py`` proves it: in the function as it runs there, the
first call is right before the second). So one ``with <stream> if <flag> else nullcontext():`` holds all three:
with the flag on, only the two calls run in it, on the side stream, as they did in two blocks; with it off,
the block is the caller's stream and runs as written. The first call's fork stays its own: the record moves
before the ``if`` (on the caller's stream, under the ``if``'s test), its wait stays first inside the ``if``.

The first call must always fork where the ``if`` runs its body (its own guard static), the ``if``'s test read
the same value as the second call's guard (the planner's keys: ``relations.covers``), the call alone in the
``if``'s body with no ``else``, with no join record of its own in the block; no step may be placed between
the two calls (it would run on the side stream), nor inside the statements between. Those statements follow
one another with no blank or comment line (the rewriters would spell the block as several ``with``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow.caller_facts import CallerFacts, Narrowed
from codegen.lower.flow.guard_paths import Assumed, pruned
from codegen.lower.flow.sites import Site
from codegen.lower.flow.spelling import spelled_expr
from codegen.lower.flow.tensors import Returns
from codegen.lower.plan import Anchor, Cond, Record, Step, Wait, Wrap

__all__ = ["guarded_body", "one_block"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
Steps = dict[Anchor, list[Step]]


@attrs.frozen(kw_only=True)
class _Found:
    outer: ast.If  # ``if <guard>:`` around the first call
    first: ast.stmt  # the first call's statement
    between: tuple[ast.stmt, ...]  # what stands between the ``if`` and the second call


def guarded_body(
    fn: _Function,
    keys: list[str | None],
    key_of: Callable[[str, int], str | None],
    returns: Returns,
    site: int,
) -> _Function | None:
    """``fn`` without the branches that cannot run where the guard of ``site`` (its key in ``keys``) holds."""
    key = keys[site]
    if key is None or key.startswith("<call"):
        return None
    return pruned(fn, Assumed(key=key, key_of=key_of, returns=returns))


def one_block(wraps: dict[ast.stmt, Wrap], facts: CallerFacts, steps: Steps, narrowed: Narrowed | None) -> None:
    """Each guarded call's wrap joined to the ``if <guard>:`` call before it, where the guard rules out what
    stands between (``wraps`` and ``steps`` changed in place)."""
    if narrowed is None:
        return
    by_stmt = {site.stmt: site for site in facts.sites}
    for site in facts.sites:
        found = _candidate(site, wraps, facts, steps, by_stmt)
        if found is not None and _adjacent(narrowed(site.index), found.first, site.stmt):
            _join(wraps, steps, found, site.stmt)


def _candidate(
    site: Site, wraps: dict[ast.stmt, Wrap], facts: CallerFacts, steps: Steps, by_stmt: dict[ast.stmt, Site]
) -> _Found | None:
    """The ``if`` holding the first call, that call, and the statements between, where they qualify (the
    guard aside)."""
    wrap = wraps.get(site.stmt)
    if wrap is None or wrap.switch.when is None or wrap.enter or steps.get(("before", site.stmt, "")):
        return None
    found = _if_before(site.stmt, facts.block(site.stmt), wraps)
    if found is None:
        return None
    outer, between = found
    first = outer.body[0]
    earlier = by_stmt.get(first)
    if earlier is None or not facts.relations.covers(earlier.index, site.index):
        return None
    if any(s in wraps or _has_steps(s, steps) for s in between) or not _movable(outer, first, wraps, steps):
        return None
    if not _same_switch(wraps[first], wrap) or not _contiguous([outer, *between, site.stmt]):
        return None
    return _Found(outer=outer, first=first, between=tuple(between))


def _if_before(
    stmt: ast.stmt, block: list[ast.stmt], wraps: dict[ast.stmt, Wrap]
) -> tuple[ast.If, list[ast.stmt]] | None:
    """The last ``if`` before ``stmt`` in its block whose body is one wrapped call, with the statements between;
    None where there is none, or its test is no dotted name."""
    at = block.index(stmt)
    start = next((i for i in range(at - 1, -1, -1) if _guarded_call(block[i], wraps)), None)
    if start is None:
        return None
    outer = block[start]
    assert isinstance(outer, ast.If)
    return (outer, block[start + 1 : at]) if scan.dotted_name(outer.test) is not None else None


def _contiguous(stmts: list[ast.stmt]) -> bool:
    """No blank or comment line between the statements: the rewriters keep a statement with lines above it
    out of the ``with`` before it (one block would be spelled as several, each a switch)."""
    return all(b.lineno == (a.end_lineno or a.lineno) + 1 for a, b in zip(stmts, stmts[1:]))


def _guarded_call(stmt: ast.stmt, wraps: dict[ast.stmt, Wrap]) -> bool:
    return isinstance(stmt, ast.If) and len(stmt.body) == 1 and not stmt.orelse and stmt.body[0] in wraps


def _same_switch(first: Wrap, then: Wrap) -> bool:
    return (
        first.switch.when is None
        and not first.leave
        and (first.switch.tag, first.switch.priority) == (then.switch.tag, then.switch.priority)
    )


def _movable(outer: ast.If, first: ast.stmt, wraps: dict[ast.stmt, Wrap], steps: Steps) -> bool:
    """Before the first call, only its own fork's record (unguarded), its wait first inside its ``with``;
    nothing after it or after the ``if``."""
    before = steps.get(("before", first, ""), [])
    waits = [s.event for s in wraps[first].enter if isinstance(s, Wait)]
    return (
        len(before) == 1
        and isinstance(before[0], Record)
        and before[0].when is None
        and before[0].event in waits
        and not any(steps.get(a) for a in (("after", first, ""), ("after", outer, ""), ("end", outer, "body")))
    )


def _has_steps(stmt: ast.stmt, steps: Steps) -> bool:
    inside = {id(n) for n in walked_of(stmt, ast.AST)} | {id(stmt)}
    return any(found and id(anchor[1]) in inside for anchor, found in steps.items())


def _adjacent(narrowed: _Function | None, first: ast.stmt, then: ast.stmt) -> bool:
    """Where the guard holds, ``first`` runs right before ``then`` (what stood between cannot run)."""
    if narrowed is None:
        return False
    for node in [narrowed, *walked_of(narrowed, ast.AST)]:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and then in block:
                at = block.index(then)
                return at > 0 and block[at - 1] is first
    return False


def _join(wraps: dict[ast.stmt, Wrap], steps: Steps, found: _Found, then: ast.stmt) -> None:
    """The ``if`` and the statements up to ``then`` in ``then``'s ``with``; the fork's record before the ``if``
    (under its test), its wait and keep-alives first in its body."""
    record = steps[("before", found.first, "")][0]
    assert isinstance(record, Record)
    when = Cond.of(spelled_expr(found.outer.test))
    steps.setdefault(("before", found.outer, ""), []).append(Record(event=record.event, when=when))
    steps[("before", found.first, "")] = list(wraps.pop(found.first).enter)
    for stmt in (found.outer, *found.between):
        wraps[stmt] = Wrap(switch=wraps[then].switch)
