"""A loop walked to a fixed point, so a result carried into the next iteration is joined before its use there.

A call made late in a loop's body may be read early in the next iteration: the state at the loop's head is what
enters the loop merged with what comes back to it (the end of the body, each ``continue``). The body is walked
without recording until that state no longer changes (at most ``_LOOP_LIMIT`` times; each iterate merged with the
last, so the iterates only grow), then once more from it, recording its steps. A ``while`` test reads at the head:
what it reads is joined on every edge back to it. The loop is left through its ``else`` (from the head) and through
each ``break``.

Where the state has not settled within the limit, the last iterate is no state the loop can be in: a call pending
around the back edge under a name the iterate has not reached yet would go unjoined. The walk then takes the state
it can prove instead (``_unsettled``): every pending call joined before the loop, at the end of the body and before
each ``continue``, so the head holds nothing pending and, knowing no fork, claims none (flags guard every wait).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from codegen.lower.flow.header_joins import header_joins
from codegen.lower.flow.state import EMPTY, State, joined, merge, pending
from codegen.lower.flow.transfer import join_step, minimal_joins

if TYPE_CHECKING:
    from codegen.lower.flow.analyze import Walk

__all__ = ["Loop", "walk_loop"]

_LOOP_LIMIT = 20
_Looping = ast.For | ast.AsyncFor | ast.While


@attrs.define(eq=False)
class Loop:
    """The states that leave one iteration early: at each ``break``, and at each ``continue`` (with its statement)."""

    breaks: list[State] = attrs.Factory(list)
    continues: list[tuple[ast.stmt, State]] = attrs.Factory(list)


def walk_loop(
    walk: Walk, stmt: _Looping, state: State, enter: Callable[[State], State], test: set[str] | None
) -> State | None:
    """The state after the loop ``stmt`` entered in ``state`` (``enter``: what starting an iteration binds;
    ``test``: what a ``while`` test reads)."""
    head = _head(walk, stmt, state, enter, test)
    if head is None:
        return _unsettled(walk, stmt, state, enter, test)
    _, loop = _iterate(walk, stmt, head, enter, test)
    exits = walk.block(stmt.orelse, head) if stmt.orelse else _ran_out(walk, stmt, state, head, enter)
    return merge(exits, *loop.breaks)


def _unsettled(
    walk: Walk, stmt: _Looping, state: State, enter: Callable[[State], State], test: set[str] | None
) -> State | None:
    """The loop whose head did not settle: every pending call joined on each edge into the head (before the loop,
    at the end of the body, before each ``continue``), so the body is walked, recording, from a head with nothing
    pending; the loop runs out, or leaves its ``else``, in that state."""
    _join_all(walk, ("before", stmt, ""), state)
    out, loop = _iterate(walk, stmt, EMPTY, enter, test)
    if out is not None:
        _join_all(walk, ("end", stmt, "body"), out)
    for at, left in loop.continues:
        _join_all(walk, ("before", at, ""), left)
    exits = walk.block(stmt.orelse, EMPTY) if stmt.orelse else EMPTY
    return merge(exits, *loop.breaks)


def _join_all(walk: Walk, anchor: tuple[str, ast.AST, str], state: State) -> State:
    """Join, at ``anchor``, every call pending in ``state``."""
    joins = minimal_joins([join_step(p, state) for p in pending(state)], state)
    walk.place(anchor, [*joins])
    return joined(state, (p.site for p in pending(state)))


def _ran_out(walk: Walk, stmt: _Looping, state: State, head: State, enter: Callable[[State], State]) -> State | None:
    """The state a loop with no ``else`` leaves in when it runs out: its head's, or, where its last iteration knows
    tests false (``last_iteration.py``), the state that iteration ends in, merged with the one it entered with
    unless it surely runs an iteration."""
    if not isinstance(stmt, ast.For) or stmt not in walk.last.tests.values():
        return head
    recording, walk.recording = walk.recording, False
    walk.lasting.add(stmt)
    try:
        out, loop = _iterate(walk, stmt, head, enter, None)
    finally:
        walk.lasting.discard(stmt)
        walk.recording = recording
    return merge(None if stmt in walk.last.entered else state, out, *(s for _, s in loop.continues))


def _head(
    walk: Walk, stmt: _Looping, state: State, enter: Callable[[State], State], test: set[str] | None
) -> State | None:
    """The state at the loop's head, iterated to a fixed point (nothing recorded); None where it does not settle
    within ``_LOOP_LIMIT`` iterations. Each iterate merges the last with what comes back to the head, so it only
    grows: an iteration that joins a call a larger head carries (``z = z + w`` reads ``w``, which the head holds
    only once the copies ``w = v``, ``v = u`` carried a result around twice) must not shrink the head again, or
    the iterates cycle and the last one may miss a result still in flight."""
    recording, walk.recording = walk.recording, False
    head = state
    try:
        for _ in range(_LOOP_LIMIT):
            out, loop = _iterate(walk, stmt, head, enter, test)
            new_head = merge(head, out, *(s for _, s in loop.continues))
            if new_head == head:
                return head
            head = new_head if new_head is not None else state
        return None
    finally:
        walk.recording = recording


def _iterate(
    walk: Walk, stmt: _Looping, head: State, enter: Callable[[State], State], test: set[str] | None
) -> tuple[State | None, Loop]:
    """One iteration from ``head``: the state at the end of the body, and the states that left it early."""
    frame = Loop()
    walk.loops.append(frame)
    try:
        out = walk.block(stmt.body, enter(head))
    finally:
        walk.loops.pop()
    if test is not None:  # a ``while`` test runs at the head: join what it reads or writes on every edge back to it
        out = walk.join_reads(stmt, out, test, ("end", stmt, "body")) if out is not None else None
        out = header_joins(walk, stmt, out, ("end", stmt, "body")) if out is not None else None
        again = [(c, walk.join_reads(c, s, test)) for c, s in frame.continues]
        frame.continues = [(c, header_joins(walk, stmt, s, ("before", c, ""))) for c, s in again]
    return out, frame
