"""The effect of one simple statement on the pending stream calls: joins before it, relays, names it binds.

A pending call is joined just before the first statement that reads (the data of) a name holding its result, or that
returns. A name passed bare to another planned stream call is not read by the caller's stream: that call's stream waits
for the producing stream directly (a *relay*), or, on the same stream, needs nothing. ``y = x`` and ``t = (x, z)`` only
copy references: the new names hold the result too. Rebinding or deleting a name drops it (``statement_names.py``). What
a statement or a planned call writes, or reads of objects' state, joins a pending call too (``crossing_writes.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

import attrs

from codegen.lower.flow.crossing_writes import state_crosses, state_written, touches, writes_apart
from codegen.lower.flow.fresh_bindings import released
from codegen.lower.flow.state import Pending, State, fork, joined, pending
from codegen.lower.flow.state_access import state_reads
from codegen.lower.flow.statement_names import data_read, rebound
from codegen.lower.flow.writes import inplace_writes

if TYPE_CHECKING:
    from codegen.lower.flow.item_slots import Slots

__all__ = ["Join", "Relations", "Relay", "SiteView", "Step", "join_step", "minimal_joins", "transfer"]


@attrs.frozen
class Join:
    """The caller's stream waits for ``site`` here; ``may``: only if it forked (a flag set at the call says).
    ``names``: what the caller may read of the joined results afterwards (kept alive for its stream); ``where``:
    facts of fixed tests true wherever it is still pending (the wait re-reads them: ``fixed_tests.py``)."""

    site: int
    may: bool
    names: frozenset[str] = attrs.field(default=frozenset(), eq=False)
    where: frozenset[tuple[str, bool]] = attrs.field(default=frozenset(), eq=False)
    slot: str = ""  # the index ``j`` of the one item ``xs[j]`` whose call it waits for: the call stays pending


@attrs.frozen
class Relay:
    """The stream of ``to`` waits for the stream of ``site`` here (the caller's stream does not)."""

    site: int
    to: int
    may: bool


Step = Join | Relay


class Relations(Protocol):
    """How two planned calls relate, as the planner knows from their streams and guards."""

    def consume(self, producer: int, consumer: int) -> str:
        """``producer``'s result passed to ``consumer``: "none" (same stream), "relay", or "join"."""

    def covers(self, earlier: int, later: int) -> bool:
        """Joining ``later`` also joins ``earlier`` (same stream, and ``later`` forks whenever ``earlier`` did)."""

    def state_of(self, site: int) -> frozenset[str]:
        """What of objects' state ``site``'s call reads on its stream (``self.buf``, ``self.sub.*``)."""

    @property
    def dropped(self) -> Mapping[ast.stmt, frozenset[str]]:
        """A call left on the caller's stream -> the caller's names it writes in place (no longer a site)."""

    def state_written(self, stmt: ast.stmt, apart: frozenset[str] = frozenset()) -> frozenset[str]:
        """What of objects' state ``stmt`` writes in place on the caller's stream (``state_writes.py``), but through
        items of the list attributes ``apart`` (``item_apart.py``)."""


@attrs.frozen(kw_only=True)
class SiteView:
    """What the analysis needs to know of a planned call site."""

    index: int
    names: frozenset[str]  # the names its statement binds to the result
    bare: frozenset[str]  # names passed to it as whole arguments
    reads: frozenset[str]  # what the statement reads on the caller's stream (bare arguments excluded)
    guarded: bool = False  # whether it forks depends on a value that may change between two of its calls
    inputs: frozenset[str] = frozenset()  # the caller's names whose memory the call reads
    event: str = ""  # the callee: calls of one callee record one join event
    state: frozenset[str] = frozenset()  # what of objects' state the call reads (its body's on its stream)
    writes: frozenset[str] = frozenset()  # the caller's names whose memory the call writes in place (sites.py)
    state_writes: frozenset[str] = frozenset()  # what of objects' state its body writes (``self.buf``, ``self.*``)


def join_step(entry: Pending, state: State) -> Join:
    """The join of ``entry``, holding the names of the calls it covers too."""
    covered = entry.covers if entry.forked else frozenset()
    names = entry.names.union(*(p.names for p in pending(state) if p.site in covered))
    return Join(entry.site, not entry.forked, names, entry.where)


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
    asked = _asked(stmt, state, site, relations, methods)
    steps = _joins(asked, state, site, relations)
    joining = {s.site for s in steps}
    steps += _item_joins(asked, state, joining)
    if site is not None:
        steps += _consumed(state, site, relations)
        steps += [join_step(p, state) for p in pending(state) if p.site == site.index and site.guarded]
    return steps


@attrs.frozen
class _Asked:
    """What one statement reads and writes in place, and per pending call (by site) what it reads of that call's
    results as one micro-batch's item (``item_slots.py``) and apart from it (``item_apart.py``)."""

    stmt: ast.stmt
    reads: frozenset[str] | set[str]
    written: frozenset[str]
    slots: Slots | None
    items: dict[int, frozenset[str]]
    apart: dict[int, frozenset[str]]


def _asked(
    stmt: ast.stmt, state: State, site: SiteView | None, relations: Relations, methods: frozenset[str]
) -> _Asked:
    """The reads and writes of ``stmt``: a planned call's own reads where it is one, else what the statement reads
    of data and of objects' state; a call left on the caller's stream writes what it was found to write."""
    reads = data_read(stmt) | state_reads(stmt, methods) if site is None else set(site.reads)
    written = inplace_writes(stmt) | (frozenset() if site else relations.dropped.get(stmt, frozenset()))
    slots = getattr(relations, "slots", None)
    items = {p.site: slots.items(stmt, p.site) if slots else frozenset() for p in pending(state)}
    apart = {p.site: slots.apart_of(stmt, p.site) if slots else frozenset() for p in pending(state)}
    return _Asked(stmt=stmt, reads=reads, written=written, slots=slots, items=items, apart=apart)


def _joins(asked: _Asked, state: State, site: SiteView | None, relations: Relations) -> list[Step]:
    """A join for each pending call whose results the statement reads (its items apart), whose inputs it writes,
    or whose state it or a planned call crosses."""
    return [join_step(p, state) for p in pending(state) if _touched(asked, p, site, relations)]


def _touched(asked: _Asked, p: Pending, site: SiteView | None, relations: Relations) -> bool:
    slots, apart = asked.slots, asked.apart[p.site]
    return bool(
        touches(p.names, asked.reads - asked.items[p.site] - apart)
        or p.inputs & (asked.written - (apart & slots.distinct if slots else frozenset()))
        or writes_apart(p, site, relations)
        or state_crosses(p, site, relations)
        or state_written(p, asked.stmt, site, relations, apart)
    )


def _item_joins(asked: _Asked, state: State, joining: set[int]) -> list[Step]:
    """A join of one item's call for each pending call not joined already whose result is read as an item."""
    return [
        attrs.evolve(join_step(p, state), slot=asked.slots.reads[asked.stmt][p.site][0])  # type: ignore[union-attr]
        for p in pending(state)
        if p.site not in joining and p.names & asked.items[p.site]
    ]


def _forked(state: State, site: SiteView, steps: list[Step], relations: Relations) -> State:
    """The call forks: pending from here, covering the calls relayed to it and those its join covers."""
    relayed = [s.site for s in steps if isinstance(s, Relay)]
    covered = [p.site for p in pending(state) if relations.covers(p.site, site.index)]
    return fork(state, site.index, site.names, [*relayed, *covered], site.inputs)


def minimal_joins(joins: list[Join], state: State) -> list[Join]:
    """Drop the joins another join here makes redundant (it covers them on every path)."""
    sites = {j.site for j in joins if not j.slot}  # a slot's wait covers one item's call only
    covered = {c for p in state if p.site in sites and p.forked for c in p.covers}
    return [j for j in joins if j.site not in covered]


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
