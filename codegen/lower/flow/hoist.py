"""A later call on a side stream issued in an earlier call's block, above main-stream work that does not touch it.

vllm-ascend's DeepSeek-V4 MLA prolog runs its KV half as three calls on the overlap stream with main-stream work
between them (the query's quantization, its matmuls, its norm): three ``with`` blocks, the third forked again.
A careful engineer issues the three as one block at the first fork: the side stream has all its work at once,
and the main stream's statements keep their order. A call moves up to right after the call before it on its
stream when both stand in the function's body (or the ``if`` holding it moves to the end of the ``if`` the call
before it ends: ``hoist_into.py``), on one stream and priority, under one guard read once (the planner's keys),
and:

- the statements between may be run after it as the source reads (``hoist_above.py``: no jump, nothing bound
  that it reads or binds, no manual call, no graph break, no planned call on its own stream); a planned call on
  another stream between is passed over like main-stream work (omni-infer's second top-k gather, issued after
  the local all-gather and three swap rounds on three other streams, goes into the first gather's block);
- the planner's analysis of the function with the call moved joins it nowhere among them: nothing there reads
  what it makes or writes, nor writes what it reads (the test the planner makes for any work that runs while
  the call is pending: the two may run in either order; a call on another stream that does waits for it, a
  relay among them); nor joins an earlier call of its callee there (the wait for that call's join event would
  wait for the moved call too);
- the plan made so issues fewer sync calls (switches, records, waits, kept tensors) than without the move.

The moves are tried one at a time in source order, each on the order the earlier ones left; a call keeps its
place where any test fails. The plan says which statement now follows which (``CallerPlan.moves``); the rewriter
moves the lines (``codegen/rewrite/moved.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection

import attrs

from codegen.index.walked import walked
from codegen.lower.flow.hoist_above import alone, may_move
from codegen.lower.flow.hoist_into import guarded_call, into, issued
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import statement_blocks
from codegen.lower.flow.transfer import Relations, Step
from codegen.lower.plan import Anchor, Assign, CallerPlan, KeepAlive

__all__ = ["Apart", "Trial", "hoisted"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen(kw_only=True)
class Apart:
    """The planner's round of the function as written: its calls, their guard keys and relations."""

    sites: list[Site]
    keys: list[str | None]
    relations: Relations


@attrs.frozen(kw_only=True)
class Trial:
    """The planner's round and plan of the function with some calls moved."""

    sites: list[Site]
    steps: dict[Anchor, list[Step]]
    plan: CallerPlan


def hoisted(
    fn: _Function,
    apart: Apart,
    plan: CallerPlan,
    trial: Callable[[_Function], Trial | None],
    fixed: Collection[ast.stmt],
) -> CallerPlan:
    """``plan``, or the plan of ``fn`` with calls moved up where every test holds (``trial``: plans a reordered
    copy; ``fixed``: statements no call moves across)."""
    current, moves, best, cost = fn, dict[ast.stmt, ast.stmt](), plan, None
    planned = {s.stmt: s for s in apart.sites}
    for site in apart.sites:
        found = _move(site, current.body, planned, apart)
        if found is None:
            continue
        moved, earlier, between = found
        if not may_move(site, between, {*fixed, *planned} - _other_streams(between, planned, site), moved):
            continue
        tried = {**moves, moved: earlier.stmt}
        copied, copies = issued(fn, tried)
        done = trial(copied)
        cost = _cost(plan, fn) if cost is None else cost  # counted once a move is tried (most callers try none)
        if done is None or not _kept_apart(done, apart, site, between) or _cost(done.plan, copied) >= cost:
            continue
        current, moves, cost = copied, tried, _cost(done.plan, copied)
        best = _restored(done.plan, copies)
    return attrs.evolve(best, moves=moves) if moves else plan


def _move(
    site: Site, order: list[ast.stmt], planned: dict[ast.stmt, Site], apart: Apart
) -> tuple[ast.stmt, Site, list[ast.stmt]] | None:
    """What moves (the call's statement, or the ``if`` around it: ``hoist_into.py``), the planned call it would
    follow, and the statements between; None where nothing qualifies: no planned call before it in ``order``, or
    one nested in a statement between that it may not follow into."""
    moved = site.stmt if site.stmt in order else guarded_call(site.stmt, order)
    if moved is None or not alone(moved, order):
        return None
    at = order.index(moved)
    for to in range(at - 1, -1, -1):
        stmt = order[to]
        if stmt in planned and planned[stmt].tag != site.tag:
            continue  # a call on another stream: passed over where the planner's analysis keeps the two apart
        if stmt in planned:
            after: ast.stmt | None = stmt
        elif any(node in planned for node in walked(stmt)):
            after = into(stmt, moved) if isinstance(moved, ast.If) else None
        else:
            continue
        earlier = planned.get(after) if after is not None else None
        block = order if stmt is after else stmt.body  # type: ignore[attr-defined]
        if earlier is None or not _pair(earlier, site, apart) or not alone(earlier.stmt, block):
            return None
        return moved, earlier, order[to + 1 : at]
    return None


def _other_streams(between: list[ast.stmt], planned: dict[ast.stmt, Site], site: Site) -> set[ast.stmt]:
    """The statements of ``between`` that are planned calls on another stream than ``site``'s."""
    return {stmt for stmt in between if stmt in planned and planned[stmt].tag != site.tag}


def _pair(earlier: Site, site: Site, apart: Apart) -> bool:
    """One stream and priority, one guard read once."""
    key = apart.keys[site.index]
    return (
        earlier.tag == site.tag
        and earlier.callee.priority == site.callee.priority  # type: ignore[attr-defined]
        and apart.keys[earlier.index] == key
        and not (key or "").startswith("<call")
        and apart.relations.covers(earlier.index, site.index)
    )


def _kept_apart(found: Trial, apart: Apart, site: Site, between: list[ast.stmt]) -> bool:
    """The same calls are planned, and no join or relay among ``between`` reads the moved call's event: none of
    its own, nor one of an earlier call of its callee (that wait would wait for the moved call too)."""
    if {id(s.stmt) for s in found.sites} != {id(s.stmt) for s in apart.sites}:
        return False
    key = site.callee.key  # type: ignore[attr-defined]
    inside = {id(node) for stmt in between for node in walked(stmt)}
    return not any(
        found.sites[step.site].callee.key == key  # type: ignore[attr-defined]
        for anchor, steps in found.steps.items()
        if id(anchor[1]) in inside
        for step in steps
    )


def _cost(plan: CallerPlan, fn: _Function) -> int:
    """The sync calls ``plan`` issues, as written: records, waits, GE's tokens and edges, kept tensors, and one
    switch per ``with`` (consecutive wraps on one stream with nothing between share one); flags are free."""
    steps = [s for found in plan.steps.values() for s in found]
    steps += [s for w in plan.wraps.values() for s in (*w.enter, *w.leave)]
    calls = sum(len(s.values) if isinstance(s, KeepAlive) else not isinstance(s, Assign) for s in steps)
    return calls + _switches(plan, fn)


def _switches(plan: CallerPlan, fn: _Function) -> int:
    blocks = statement_blocks(fn)
    found = 0
    for stmt, wrap in plan.wraps.items():
        block = blocks.get(stmt, [stmt])
        at = block.index(stmt)
        before = block[at - 1] if at else None
        shared = (
            before is not None
            and before in plan.wraps
            and plan.wraps[before].switch == wrap.switch
            and not plan.steps.get(("after", before, ""))
            and not plan.steps.get(("before", stmt, ""))
        )
        found += not shared
    return found


def _restored(plan: CallerPlan, copies: dict[ast.AST, ast.AST]) -> CallerPlan:
    """``plan`` of a reordered copy, its anchors and wraps on the copied nodes (the function, an ``if`` a call moved
    into) put on the nodes they copy."""
    steps = {(kind, copies.get(node, node), field): found for (kind, node, field), found in plan.steps.items()}
    wraps = {copies.get(stmt, stmt): wrap for stmt, wrap in plan.wraps.items()}
    return attrs.evolve(plan, steps=steps, wraps=wraps)  # type: ignore[arg-type]
