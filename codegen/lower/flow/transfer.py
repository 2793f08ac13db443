"""The effect of one simple statement on the pending stream calls: joins before it, relays, names it binds.

A pending call is joined just before the first statement that reads (the data of) a name holding its result, or that
returns. A name passed bare to another planned stream call is not read by the caller's stream: that call's stream waits
for the producing stream directly (a *relay*), or, on the same stream, needs nothing. ``y = x`` and ``t = (x, z)`` only
copy references: the new names hold the result too. Rebinding or deleting a name drops it (``statement_names.py``). What
a statement or a planned call writes, or reads of objects' state, joins a pending call too (``statement_waits.py``).
The steps themselves, and what the analysis knows of a planned call, are ``sync_steps.py``'s.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.fresh_bindings import released
from codegen.lower.flow.state import State, fork, joined, pending
from codegen.lower.flow.statement_names import rebound
from codegen.lower.flow.statement_waits import asks, item_joins, touched_joins
from codegen.lower.flow.sync_steps import Join, Relations, Relay, SiteView, Step, join_step, minimal_joins

__all__ = ["Join", "Relations", "Relay", "SiteView", "Step", "join_step", "minimal_joins", "transfer"]


def transfer(
    stmt: ast.stmt, state: State, site: SiteView | None, relations: Relations, methods: frozenset[str] = frozenset()
) -> tuple[list[Step], State]:
    """The steps placed before ``stmt`` and the state after it; ``methods``: the caller's own methods (a call of
    one may read any state of its object)."""
    if isinstance(stmt, ast.Return):
        joins = minimal_joins([join_step(p, state) for p in pending(state)], state)
        return [*joins], joined(state, (j.site for j in joins))
    needed = _needed(stmt, state, site, relations, methods)
    joins = minimal_joins([s for s in needed if isinstance(s, Join)], state)
    steps: list[Step] = [*joins, *(s for s in needed if isinstance(s, Relay))]
    state = rebound(stmt, joined(state, (j.site for j in joins if not j.slot)))
    state = released(state, getattr(relations, "fresh", {}).get(stmt, frozenset()))  # ``fresh_bindings.py``
    return steps, (_forked(state, site, steps, relations) if site is not None else state)


def _needed(
    stmt: ast.stmt, state: State, site: SiteView | None, relations: Relations, methods: frozenset[str]
) -> list[Step]:
    """Every join and relay ``stmt`` asks for, the redundant joins among them too: a pending call whose result it
    reads (or whose inputs it writes in place, or whose state a planned call reads on another stream), a result
    read as one micro-batch's item, a result passed bare to a planned call, and the call's own earlier fork when
    its guard may change between two calls."""
    if not pending(state):
        return []  # nothing to wait for: what the statement reads and writes is not asked
    reads = asks(stmt, state, site, relations, methods)
    steps = touched_joins(reads, state, site, relations)
    joining = {s.site for s in steps}
    steps += item_joins(reads, state, joining)
    if site is not None:
        steps += _consumed(state, site, relations)
        steps += [join_step(p, state) for p in pending(state) if p.site == site.index and site.guarded]
    return steps


def _forked(state: State, site: SiteView, steps: list[Step], relations: Relations) -> State:
    """The call forks: pending from here, covering the calls relayed to it and those its join covers."""
    relayed = [s.site for s in steps if isinstance(s, Relay)]
    covered = [p.site for p in pending(state) if relations.covers(p.site, site.index)]
    return fork(state, site.index, site.names, [*relayed, *covered], site.inputs)


def _consumed(state: State, site: SiteView, relations: Relations) -> list[Step]:
    """Pending results passed bare to ``site``: relayed to its stream, joined, or nothing on one stream."""
    steps: list[Step] = []
    for entry in pending(state):
        if entry.site == site.index or not entry.names & site.bare:
            continue
        how = relations.consume(entry.site, site.index)
        if how == "relay":
            steps.append(Relay(entry.site, site.index, not entry.forked))
        elif how == "join":
            steps.append(join_step(entry, state))
    return steps
