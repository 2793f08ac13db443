"""Lower one caller's analysis to steps: each planned call wrapped on its stream, with no more sync than its data asks.

A planned call's statement runs inside ``with <its stream>:`` (:class:`~codegen.lower.plan.Wrap`). Around it, only what
the dataflow needs, each decided in its own module and composed here:

- the fork (the caller's stream records, the side stream waits first thing): :mod:`~codegen.lower.flow.fork` says
  which calls fork, :mod:`~codegen.lower.flow.wrap_fork` which record each waits for; two calls forked at one point
  share one record (:mod:`~codegen.lower.flow.fold`);
- the join's record (last thing on the side stream): only where some wait reads it, per call
  (:mod:`~codegen.lower.flow.read_records`); which event each wait reads, and under which condition
  (:mod:`~codegen.lower.flow.join_events`);
- an input kept alive for the side stream (``record_stream``), and a result kept alive for the caller's stream:
  :mod:`~codegen.lower.flow.keep_alive` (none after a join the function returns right after: ``leaves.py``);
  once the blocks are final, an input the caller made is kept where its stream first allocates before the join,
  not at the fork (:mod:`~codegen.lower.flow.late_keeps`).

The analysis's steps come sorted into joins and relays (:mod:`~codegen.lower.flow.sorted_steps`).
"""

from __future__ import annotations

import ast
import functools

import attrs

from codegen.lower.flow import fold, fork, late_keeps, one_block, tidy
from codegen.lower.flow.ahead_keeps import kept_ahead
from codegen.lower.flow.before_call import before_call
from codegen.lower.flow.caller_context import CallerContext
from codegen.lower.flow.caller_facts import CallerFacts, Planned, facts_of
from codegen.lower.flow.every_path_fork import every_path_fork
from codegen.lower.flow.held_past_join import kept_unless_held
from codegen.lower.flow.if_facts import spelled
from codegen.lower.flow.if_in_block import flags_unread, if_in_block
from codegen.lower.flow.join_events import JoinEvents, join_events
from codegen.lower.flow.keep_alive import Ahead, Kept, inputs_to_keep, results_to_keep
from codegen.lower.flow.leaves import leaves
from codegen.lower.flow.loop_views import placed_before_loops
from codegen.lower.flow.next_iteration import another_iteration, last_record
from codegen.lower.flow.read_records import read_records
from codegen.lower.flow.site_sync import short_name
from codegen.lower.flow.sites import Site
from codegen.lower.flow.sorted_steps import sorted_steps
from codegen.lower.flow.statements import statement_blocks
from codegen.lower.flow.transfer import Join, Relay
from codegen.lower.flow.unbound_keeps import bound_at, first_bindings
from codegen.lower.flow.wrap_fork import Forks
from codegen.lower.plan import (
    Anchor,
    Assign,
    CallEdit,
    CallerPlan,
    Cond,
    KeepAlive,
    Record,
    Step,
    SwitchStream,
    Value,
    Wait,
    Wrap,
)

__all__ = ["lower_sites", "statement_blocks"]  # statement_blocks: for ge.py


@attrs.define(eq=False)
class _Lowering:
    facts: CallerFacts
    context: CallerContext
    fn: ast.FunctionDef | ast.AsyncFunctionDef
    steps: dict[Anchor, list[Step]] = attrs.Factory(dict)
    forks: Forks = attrs.field(init=False)
    kept: Kept = attrs.Factory(dict)
    ahead: Ahead = attrs.Factory(dict)  # tensors kept alive before a loop over their views
    kept_ahead: set[tuple[ast.stmt, str]] = attrs.Factory(set)  # ... whose step is placed
    applied: dict[ast.stmt, str] = attrs.Factory(dict)  # the splits made: a wait stands before the statement
    read: set[int] = attrs.Factory(set)  # the calls whose join record some wait reads (``read_records.py``)
    first: dict[str, int] = attrs.Factory(dict)  # each name's first binding line (``unbound_keeps.py``)
    events: JoinEvents = attrs.field(init=False)  # the event each wait reads (``join_events.py``)

    def run(self) -> CallerPlan:
        sites, syncs = self.facts.sites, self.facts.syncs
        self.events = join_events(self.facts, self.context)
        placed = sorted_steps(self.facts.result)
        self.forks = Forks(facts=self.facts, forks=fork.forks(self.facts, placed.sure))
        for site in sites:  # a sibling's fork on every path serves (``sibling_fork.py``)
            if self.context.siblings.needs_no_fork(site.call.call, self.facts.relations.state_of(site.index)):
                self.forks.forks[site.index] = False
        self.read = read_records(self.fn, self.facts, [self.events.event(s.index).var for s in sites], placed.waited)
        self.read |= self.events.slots.read(placed.waited)
        self._place_joins(placed.joins)
        split = self.applied = tidy.bound_before_waits(self.steps, self.facts.planned.splits)
        wrapped = {site.stmt: self._wrap(site, placed.relays.get(site.index, [])) for site in sites}
        wraps = tidy.glued(fold.folded(wrapped, self.facts.blocks, self.steps), self.facts.blocks, self.steps)
        start = self._moved(wraps, split)
        calls = {site.call.call: CallEdit(hoisted=sync.hoisted) for site, sync in zip(sites, syncs) if sync.hoisted}
        steps = {k: tuple(v) for k, v in self.steps.items() if v}
        return CallerPlan(steps=steps, start=start, calls=calls, wraps=wraps, splits=split)

    def _place_joins(self, joins: list[tuple[Anchor, Join]]) -> None:
        """Each join's wait, unless another wait there reads its event, and the results kept alive after it."""
        for anchor, join in joins:
            event_of = functools.partial(self.events.slotted, anchor=anchor)
            waited = tidy.waited_with(join, anchor, joins, event_of, self.facts.relations, self.events.joined_as)
            slot = self.events.slots.waits(join.site, anchor, join.slot)
            self.steps.setdefault(anchor, []).extend(self._join(join, waited, leaves(self.facts, anchor), anchor, slot))

    def _moved(self, wraps: dict[ast.stmt, Wrap], split: dict[ast.stmt, str]) -> tuple[Step, ...]:
        """Once the wraps are final: a guarded call joined to the block of the call before it (``one_block.py``),
        an ``if`` put in that block (``if_in_block.py``), the keeps of the caller's names moved to its first
        allocation (``late_keeps.py``); the flags the caller clears as it starts, but those no step reads now."""
        one_block.one_block(wraps, self.facts, self.steps, self.facts.planned.narrowed)
        taken = if_in_block(wraps, self.facts, self.steps)  # an ``if`` in the block of the call before it
        every_path_fork(self.fn, wraps, self.facts, self.steps, self.context.siblings.hoisted)  # ``sibling_fork.py``
        late_keeps.late_keeps(wraps, self.facts, self.steps, split)
        unread = flags_unread(wraps, self.facts, self.steps, taken)
        set_after = {s.flag for s in self.facts.syncs if s.flag and not s.guard_text}
        unread |= tidy.unread_flags(self.steps, wraps, set_after)
        return tidy.cleared_flags(self.facts, unread)

    def _join(self, step: Join, waited: bool, leaves: bool, anchor: Anchor, slot: tuple[str, str]) -> list[Step]:
        """The wait for ``step``'s call (unless ``waited``) and the results kept alive after it (none where the
        function ``leaves`` right after: no later call of it can allocate then; none first bound below ``anchor``:
        ``unbound_keeps.py``); ``slot``: the event it picks and the test it adds for one micro-batch's call
        (``item_slots.py``)."""
        when = Cond.of(self.events.when(step.site, step.may), *map(spelled, sorted(step.where)), slot[1] or None)
        event = self.events.picked(self.events.event(step.site), step.site, slot[0])
        out: list[Step] = [] if waited else [Wait(event=event, when=when)]
        kept = () if leaves else results_to_keep(self.facts, step, self.forks.forks)
        values = bound_at(kept, anchor, self.first)
        if values:
            ahead = kept_ahead(self.facts, step.site, anchor, values, (self.forks.forks, self.context.sized))
            out.append(KeepAlive(stream=self.context.current, when=Cond.of(when, ahead), values=values))
        return out

    def _wrap(self, site: Site, relayed: list[Relay]) -> Wrap:
        sync = self.facts.syncs[site.index]
        guard = Cond.of(sync.flag) if sync.flag and sync.guard_text else Cond.of(sync.guard_text)
        before = before_call(site, sync)
        events = self.context.events(site)
        enter: list[Step] = []  # no fork where a user event the callee waits for serves (``event_fork.py``)
        if not self.context.event_forks.serves(self.facts, site):
            enter = self.forks.enter(site, events.fork, guard, before, self.steps, [r.site for r in relayed])
        enter += [self.events.wait(r.site, r.may) for r in relayed]
        kept, again = self._inputs_kept(site, guard)
        enter += kept
        before += again
        if before:
            self.steps.setdefault(("before", site.stmt, ""), []).extend(before)
        if sync.flag and not sync.guard_text:
            self.steps.setdefault(("after", site.stmt, ""), []).append(Assign(name=sync.flag, value="True"))
        flag = next((s.name for s in again if isinstance(s, Assign)), None)  # ``next_iteration.py``
        last = f"not {flag}" if flag and last_record(self.facts, site, self.events.joined_as) else None
        record = Record(event=self.events.recorded(site.index), when=Cond.of(guard, last))  # maybe an earlier call's
        leave = (record,) if site.index in self.read else ()
        priority = site.callee.priority  # type: ignore[attr-defined]
        return Wrap(switch=SwitchStream(tag=site.tag, priority=priority, when=guard), enter=tuple(enter), leave=leave)

    def _inputs_kept(self, site: Site, guard: Cond | None) -> tuple[list[Step], list[Step]]:
        """The call's inputs kept alive for its stream as it starts, and what runs before the call to say whether
        they must be (``next_iteration.py``: only a next iteration of its loop may need them); those kept once
        before a loop over their views are placed before that loop (``loop_views.py``)."""
        values = inputs_to_keep(self.facts, site, self.applied, self.kept, self.ahead)
        held = self.context.held_state.get(site.call.call, frozenset())  # returned as they came
        values += [Value(name=k) for k in site.state_keeps if k not in held]  # named tensors of changed objects
        placed_before_loops(self.ahead, self.kept_ahead, self.steps, Cond.of(self.facts.syncs[site.index].guard_text))
        last = last_record(self.facts, site, self.events.joined_as)
        steps, sized = self.steps, self.context.sized
        test = another_iteration(self.facts, site, self.applied, steps, sized) if values or last else None
        flag = self.context.flags.fresh(f"{short_name(site)}_again") if test else None
        values, unless_held = kept_unless_held(self.facts, site, values, self.context.held_where)
        keeps: list[Step] = (
            [KeepAlive(stream=site.tag, when=Cond.of(guard, flag), values=tuple(values))] if values else []
        )
        for unless, unread in unless_held.items():  # ``held_where.py``: kept only where the callers read it no more
            keeps.append(KeepAlive(stream=site.tag, when=Cond.of(guard, flag, unless), values=tuple(unread)))
            for value in unread:
                self.kept.pop((value.name, site.tag), None)  # no later call counts on it (``kept_earlier.py``)
        return keeps, [Assign(name=flag, value=test)] if flag and test else []


def lower_sites(fn: ast.FunctionDef | ast.AsyncFunctionDef, planned: Planned, context: CallerContext) -> CallerPlan:
    """The steps of one caller: ``planned``, the planner's decisions, lowered with what ``context`` says of the
    caller (its stream and events; its ``self``, whose state lives on: never kept alive; its names that certainly
    hold a tensor; which statements issue work on no side stream; the inputs each call's results hold)."""
    return _Lowering(facts=facts_of(fn, planned, context), context=context, fn=fn, first=first_bindings(fn)).run()
