"""Which calls' join records some wait reads: a record no wait can read is not written.

A call records its join event as its last work, and a wait for that event reads the latest record of it on the
path the caller took. Two calls of one callee share the event, so a record the other call always renews before any
wait runs is read by none: ``b`` and ``a`` on stream ``s``, then, under ``if self.again:``, ``a`` joined and ``side_b``
called again; the wait for ``b`` runs under the flag that second call sets, after its record, and the first call's
record is read by no wait (the wait for ``a`` orders it). Records are decided per call, not per event.

The caller's paths are walked once per event (:mod:`~codegen.lower.flow.record_paths`): a wait reads its own event's
records only, under the flag of a call that records it, so the paths of one event never multiply those of another.
A wait marks read the latest record on every path where it runs (a wait under a call's flag: only where that call
forked); on a path with no record of its event yet, every record of it (a guard may have skipped the call; an
earlier run's record is read). Where the paths grow past a bound, or a wait is not reached, every record of its
event is kept.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.record_paths import Anchor, Overflow, RecordWalk, Wait
from codegen.lower.flow.transfer import Join, Relay

__all__ = ["read_records"]


def read_records(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, facts: CallerFacts, events: list[str], waited: Collection[int]
) -> set[int]:
    """The calls (by site index) whose join record some wait may read; ``events``: the join event each call records
    (by site index); ``waited``: the calls some join or relay waits for. Each event is walked apart."""
    flags = {i for i, sync in enumerate(facts.syncs) if sync.flag}
    waits, relayed = _waits(facts, events, flags)
    records = {site.stmt: _record(facts, site.index, events, flags) for site in facts.sites}
    read: set[int] = set()
    for event in sorted({events[w] for w in waited}):
        recorders = frozenset(i for i, e in enumerate(events) if e == event)
        walk = RecordWalk(
            {a: found for a, w in waits.items() if (found := [x for x in w if x[0] == event])},
            {s: found for s, w in relayed.items() if (found := [x for x in w if x[0] == event])},
            {stmt: r for stmt, r in records.items() if r[1] == event},
            {event: recorders},
        )
        walked = _walked(walk, fn)
        read |= recorders if walked is None else walked
    return read


def _waits(
    facts: CallerFacts, events: list[str], flags: set[int]
) -> tuple[dict[Anchor, list[Wait]], dict[ast.stmt, list[Wait]]]:
    """The waits the analysis placed: joins by anchor, relays by the call whose block they start."""
    waits: dict[Anchor, list[Wait]] = {}
    relayed: dict[ast.stmt, list[Wait]] = {}
    for anchor, steps in facts.result.steps.items():
        for step in steps:
            wait = (events[step.site], step.site if step.site in flags else None)
            if isinstance(step, Join):
                waits.setdefault(anchor, []).append(wait)
            elif isinstance(step, Relay):
                relayed.setdefault(facts.sites[step.to].stmt, []).append(wait)
    return waits, relayed


def _walked(walk: RecordWalk, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int] | None:
    """The records ``walk`` finds read (None: too many paths, or a wait it did not reach)."""
    try:
        walk.block(fn.body, frozenset({(frozenset(), frozenset())}), fn, "body")
    except Overflow:
        return None
    return walk.read if walk.seen >= {*walk.waits, *walk.relayed} else None


def _record(facts: CallerFacts, index: int, events: list[str], flags: set[int]) -> tuple[int, str, bool, bool]:
    sync = facts.syncs[index]
    guarded = bool(sync.guard_text) or facts.sites[index].guard.dynamic
    return index, events[index], guarded, index in flags
