"""How a wrapped call's side stream gets past its fork: which record it waits for, and whether it records one.

Only a call that forks (:mod:`~codegen.lower.flow.fork`) gets any of this; the first case that holds decides:

- it is given a result only earlier calls on its stream bind, whose fork ordered it too
  (:mod:`~codegen.lower.flow.bound_fork`): nothing at all;
- an earlier record of the caller serves (:func:`~codegen.lower.flow.reuse.earlier_fork`), and no call is forked
  at this very point: the side stream waits for that record, unless it already did (it is the recording call's
  stream, or an earlier call on it waited for that record on every path to this one:
  :mod:`~codegen.lower.flow.waited_records`); nothing is recorded here (so the next call shares no fork at this
  point);
- no call is forked at this point (:func:`~codegen.lower.flow.fold.same_point`): the caller's stream records the
  call's fork event just before it, and the side stream waits for it first thing;
- the call just before it forked at this same point: the side stream waits for that call's record, once per
  stream (a relayed wait for the join of a call forked there covers it: that stream waited for its record);
- an earlier call of its block on its stream forked, and only calls on that stream that did not fork stand
  between (nothing ran on the caller's stream since that record): its stream waited already, so nothing at all.
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow import fold
from codegen.lower.flow.bound_fork import bound_fork
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.reuse import earlier_fork
from codegen.lower.flow.sites import Site
from codegen.lower.flow.waited_records import WaitedRecords
from codegen.lower.plan import Anchor, Cond, EventRef, Record, Step, Wait

__all__ = ["Forks"]


@attrs.define(eq=False)
class Forks:
    """The forks of one caller's wrapped calls, decided in source order."""

    facts: CallerFacts
    forks: list[bool]  # by site index: the call forks
    forked_at: dict[ast.stmt, fold.Fork] = attrs.Factory(dict)  # call -> its fork
    recorded: dict[ast.stmt, fold.Fork] = attrs.Factory(dict)  # call -> the fork it recorded itself
    waited: WaitedRecords = attrs.field(init=False)  # the later waits for those records

    def __attrs_post_init__(self) -> None:
        self.waited = WaitedRecords(facts=self.facts)

    def enter(
        self,
        site: Site,
        event: EventRef,
        guard: Cond | None,
        before: list[Step],
        steps: dict[Anchor, list[Step]],
        relayed: list[int],
    ) -> list[Step]:
        """The waits the call's stream starts with for its fork (``event``: its own fork event); a record of its
        own is appended to ``before``, the steps just before the call (``relayed``: the calls whose joins it
        waits for directly)."""
        if not self.forks[site.index]:
            return []
        shared = fold.same_point(self.facts, site, before, steps, self.forked_at) or self._chained(site, before, steps)
        bound = bound_fork(self.facts, site, self.forked_at) if shared is None else None
        if bound is not None:
            self.forked_at[site.stmt] = bound
            return []
        earlier = earlier_fork(self.facts, site, self.recorded)
        if shared is None and earlier is not None:
            return self._reused(site, earlier, guard)
        if shared is None:
            before.append(Record(event=event, when=guard))
            fork = (event, self.facts.syncs[site.index].guard_text, frozenset({site.tag}))
            self.forked_at[site.stmt] = self.recorded[site.stmt] = fork
            return [Wait(event=event, when=guard)]
        return self._shared(site, shared, guard, relayed)

    def _reused(self, site: Site, earlier: fold.Fork, guard: Cond | None) -> list[Step]:
        """The wait for an earlier record, unless the call's stream recorded it or already waited for it."""
        record = next(stmt for stmt, fork in self.recorded.items() if fork is earlier)
        if site.tag in earlier[2] or self.waited.waited(record, site.tag, site.stmt, guard):
            return []
        self.waited.add(record, site.tag, site.stmt, guard)
        return [Wait(event=earlier[0], when=guard)]

    def _chained(self, site: Site, before: list[Step], steps: dict[Anchor, list[Step]]) -> fold.Fork | None:
        """The fork of an earlier call of the block that this call's stream waited for, when only calls on this
        stream that did not fork stand between (they run nothing on the caller's stream, under the same guard)."""
        sync = self.facts.syncs[site.index]
        if before or sync.flag or steps.get(("before", site.stmt, "")):
            return None
        block = self.facts.block(site.stmt)
        planned = {s.stmt: s for s in self.facts.sites}
        for stmt in reversed(block[: block.index(site.stmt)]):
            found, other = self.forked_at.get(stmt), planned.get(stmt)
            if steps.get(("after", stmt, "")) or other is None or not self._same(other, sync.guard_text):
                return None
            if found is not None:
                return found if site.tag in found[2] else None
            if other.tag != site.tag or self.forks[other.index] or steps.get(("before", stmt, "")):
                return None
        return None

    def _same(self, other: Site, guard: str | None) -> bool:
        sync = self.facts.syncs[other.index]
        return not sync.flag and self.facts.same_guard(sync.guard_text, guard)

    def _shared(self, site: Site, shared: fold.Fork, guard: Cond | None, relayed: list[int]) -> list[Step]:
        """A call forked at the point of the call just before it: wait for that record, once per stream."""
        event, guard_text, tags = shared
        after_fork = any(self.forked_at.get(self.facts.sites[i].stmt, (None,))[0] == event for i in relayed)
        self.forked_at[site.stmt] = (event, guard_text, tags | {site.tag})
        record = next((stmt for stmt, fork in reversed(self.recorded.items()) if fork[0] == event), None)
        if record is not None:  # the record made at this point: this stream is ordered after it from here on
            self.waited.add(record, site.tag, site.stmt, guard)
        return [Wait(event=event, when=guard)] if site.tag not in tags and not after_fork else []
