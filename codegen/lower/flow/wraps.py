"""Lower one caller's analysis to steps: each planned call wrapped on its stream, with no more sync than its data asks.

A planned call's statement runs inside ``with <its stream>:`` (:class:`~codegen.lower.plan.Wrap`). Around it, only what
the dataflow needs, each decided in its own module and composed here:

- the fork (the caller's stream records, the side stream waits first thing): :mod:`~codegen.lower.flow.fork`; two
  calls forked at one point share one record (:mod:`~codegen.lower.flow.fold`);
- the join's record (last thing on the side stream): only when some wait reads it;
- an input kept alive for the side stream (``record_stream``), and a result kept alive for the caller's stream:
  :mod:`~codegen.lower.flow.keep_alive`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.lower.flow import fold, fork, one_block, tidy
from codegen.lower.flow.analyze import Analysis
from codegen.lower.flow.caller_facts import CallerFacts, SiteEvents, SiteSync, any_may
from codegen.lower.flow.keep_alive import Ahead, Kept, inputs_to_keep, results_to_keep
from codegen.lower.flow.local_alias import guard_aliases
from codegen.lower.flow.reuse import earlier_fork
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import in_loops, simple_statements, slot_node, statement_blocks
from codegen.lower.flow.transfer import Join, Relations, Relay
from codegen.lower.plan import (
    Anchor,
    Assign,
    CallEdit,
    CallerPlan,
    Cond,
    CurrentStream,
    EventRef,
    KeepAlive,
    Record,
    Step,
    SwitchStream,
    Wait,
    Wrap,
)

__all__ = ["lower_sites", "statement_blocks"]  # statement_blocks: for ge.py


@attrs.define(eq=False)
class _Lowering:
    facts: CallerFacts
    current: CurrentStream
    events: Callable[[Site], SiteEvents]
    splits: dict[ast.stmt, tuple[str, ast.expr]]  # statement -> (name, its first operand)
    narrowed: one_block.Narrowed | None = None
    steps: dict[Anchor, list[Step]] = attrs.Factory(dict)
    waited: set[int] = attrs.Factory(set)  # sites whose join event some wait reads
    forks: list[bool] = attrs.Factory(list)
    kept: Kept = attrs.Factory(dict)
    forked_at: dict[ast.stmt, fold.Fork] = attrs.Factory(dict)  # call -> its fork
    recorded: dict[ast.stmt, fold.Fork] = attrs.Factory(dict)  # call -> the fork it recorded itself
    ahead: Ahead = attrs.Factory(dict)  # tensors kept alive before a loop over their views
    kept_ahead: set[tuple[ast.stmt, str]] = attrs.Factory(set)  # ... whose step is placed
    applied: dict[ast.stmt, str] = attrs.Factory(dict)  # the splits made: a wait stands before the statement

    def run(self) -> CallerPlan:
        sites, syncs = self.facts.sites, self.facts.syncs
        relays: dict[int, list[tuple[int, Step]]] = {}
        sure: dict[int, set[int]] = {}  # call -> the calls on other streams it surely waits for first
        joins: list[tuple[Anchor, Join]] = []
        for anchor, found in self.facts.result.steps.items():
            for step in found:
                self.waited.add(step.site)
                if isinstance(step, Relay):
                    relays.setdefault(step.to, []).append((step.site, self._wait(step.site, step.may)))
                    if not step.may:
                        sure.setdefault(step.to, set()).add(step.site)
                else:
                    joins.append((anchor, step))
        self.forks = fork.forks(self.facts, sure)
        for anchor, join in joins:
            waited = tidy.waited_with(join, anchor, joins, self._join_event, self.facts.relations)
            self.steps.setdefault(anchor, []).extend(self._join(join, waited, _leaves(self.facts, anchor)))
        split = self.applied = tidy.bound_before_waits(self.steps, self.splits)
        wrapped = {site.stmt: self._wrap(site, relays.get(site.index, [])) for site in sites}
        wraps = tidy.glued(fold.folded(wrapped, self.facts.blocks, self.steps), self.facts.blocks, self.steps)
        one_block.one_block(wraps, self.facts, self.steps, self.narrowed)
        unread = tidy.unread_flags(self.steps, wraps, {s.flag for s in syncs if s.flag and not s.guard_text})
        start = tuple(
            Assign(name=s.flag, value="False")
            for s, site in zip(syncs, sites)
            if s.flag and s.flag not in unread and any_may(self.facts.result, site.index)
        )
        calls = {site.call.call: CallEdit(hoisted=sync.hoisted) for site, sync in zip(sites, syncs) if sync.hoisted}
        return CallerPlan(
            steps={k: tuple(v) for k, v in self.steps.items() if v},
            start=start,
            calls=calls,
            wraps=wraps,
            splits=split,
        )

    def _when(self, site: int, may: bool) -> Cond | None:
        sync = self.facts.syncs[site]
        return Cond.of(sync.flag) if may and sync.flag else sync.cond

    def _wait(self, site: int, may: bool) -> Wait:
        return Wait(event=self.events(self.facts.sites[site]).join, when=self._when(site, may))

    def _join_event(self, site: int) -> EventRef:
        return self.events(self.facts.sites[site]).join

    def _join(self, step: Join, waited: bool = False, leaves: bool = False) -> list[Step]:
        """The wait for ``step``'s call (unless ``waited``) and the results kept alive after it (none where the
        function ``leaves`` right after: no later call of it can allocate then)."""
        out: list[Step] = [] if waited else [self._wait(step.site, step.may)]
        values = () if leaves else results_to_keep(self.facts, step, self.forks)
        if values:
            out.append(KeepAlive(stream=self.current, when=self._when(step.site, step.may), values=values))
        return out

    def _wrap(self, site: Site, relayed: list[tuple[int, Step]]) -> Wrap:
        sync = self.facts.syncs[site.index]
        guard = Cond.of(sync.flag) if sync.flag and sync.guard_text else Cond.of(sync.guard_text)
        before: list[Step] = [
            Assign(name=name, value=ast.unparse(slot_node(site.call.call, slot))) for slot, name in sync.hoisted
        ]
        if sync.flag and sync.guard_text:
            before.append(Assign(name=sync.flag, value=sync.guard_text))
        events = self.events(site)
        enter: list[Step] = []
        shared = fold.same_point(self.facts, site, before, self.steps, self.forked_at)
        earlier = earlier_fork(self.facts, site, self.recorded) if self.forks[site.index] else None
        if self.forks[site.index] and shared is None and earlier is not None:  # an earlier record serves
            # (not a fork at this point: the next call shares none)
            enter += [Wait(event=earlier[0], when=guard)] if site.tag not in earlier[2] else []
        elif self.forks[site.index] and shared is None:
            before.append(Record(event=events.fork, when=guard))
            enter.append(Wait(event=events.fork, when=guard))
            self.forked_at[site.stmt] = self.recorded[site.stmt] = (events.fork, sync.guard_text, frozenset({site.tag}))
        elif self.forks[site.index] and shared is not None:  # the same point: wait for that fork's record, once
            # per stream (a wait for the join of a call forked at that point covers it: that stream waited for it)
            event, guard_text, tags = shared
            after_fork = any(self.forked_at.get(self.facts.sites[i].stmt, (None,))[0] == event for i, _ in relayed)
            if site.tag not in tags and not after_fork:
                enter.append(Wait(event=event, when=guard))
            self.forked_at[site.stmt] = (event, guard_text, tags | {site.tag})
        enter += [wait for _, wait in relayed]
        values = inputs_to_keep(self.facts, site, self.applied, self.kept, self.ahead)
        for loop, tag in set(self.ahead) - self.kept_ahead:
            keep = KeepAlive(stream=tag, when=Cond.of(sync.guard_text), values=(self.ahead[loop, tag],))
            self.steps.setdefault(("before", loop, ""), []).append(keep)
            self.kept_ahead.add((loop, tag))
        if values:
            enter.append(KeepAlive(stream=site.tag, when=guard, values=tuple(values)))
        if before:
            self.steps.setdefault(("before", site.stmt, ""), []).extend(before)
        if sync.flag and not sync.guard_text:
            self.steps.setdefault(("after", site.stmt, ""), []).append(Assign(name=sync.flag, value="True"))
        waited = {self.events(self.facts.sites[i]).join.var for i in self.waited}
        leave = (Record(event=events.join, when=guard),) if events.join.var in waited else ()
        priority = site.callee.priority  # type: ignore[attr-defined]
        return Wrap(switch=SwitchStream(tag=site.tag, priority=priority, when=guard), enter=tuple(enter), leave=leave)


def _leaves(facts: CallerFacts, anchor: Anchor) -> bool:
    """The function returns right after ``anchor`` (before a ``return`` no ``finally`` follows, or at the end
    of its body)."""
    kind, node, _ = anchor
    if kind == "end":
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    owner = facts.owner(node) if kind == "before" and isinstance(node, ast.Return) else None
    while owner is not None and not (isinstance(owner, (ast.Try, ast.TryStar)) and owner.finalbody):
        owner = facts.owner(owner)
    return kind == "before" and isinstance(node, ast.Return) and owner is None


def lower_sites(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    sites: list[Site],
    syncs: list[SiteSync],
    result: Analysis,
    relations: Relations,
    current: CurrentStream,
    events: Callable[[Site], SiteEvents],
    tensors: frozenset[str] = frozenset(),
    receiver: str | None = None,
    free: Callable[[ast.stmt], bool] | None = None,
    splits: dict[ast.stmt, tuple[str, ast.expr]] | None = None,
    returned: dict[ast.expr, dict[str, frozenset[str]]] | None = None,
    narrowed: one_block.Narrowed | None = None,
) -> CallerPlan:
    """``receiver``: the caller's ``self`` (its state lives on: never kept alive); ``tensors``: its names that
    certainly hold a tensor; ``free``: whether a statement issues work on no side stream; ``splits``: statements
    whose first operand is bound to a name before their joins (``split.py``); ``returned``: the inputs each
    call's results hold (``returned_inputs.py``); ``narrowed``: the caller as it runs where a site's guard holds
    (``one_block.py``)."""
    facts = CallerFacts(
        sites=sites,
        syncs=syncs,
        result=result,
        relations=relations,
        blocks=statement_blocks(fn),
        receiver=receiver,
        tensors=tensors,
        free=free,
        simple=simple_statements(fn),
        looped=in_loops(fn),
        guard_aliases=guard_aliases(fn),
        returned=returned or {},
    )
    return _Lowering(facts=facts, current=current, events=events, splits=splits or {}, narrowed=narrowed).run()
