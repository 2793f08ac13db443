"""Lower one caller's analysis to steps: each planned call wrapped on its stream, with no more sync than its data asks.

A planned call's statement runs inside ``with <its stream>:`` (:class:`~codegen.lower.plan.Wrap`). Around it, only what
the dataflow needs, each decided here:

- the fork (the caller's stream records, the side stream waits first thing): when the call reads anything the
  side stream did not make itself, or when it is the first call on that stream in the function (so that memory
  the side stream frees and reuses is never still read by work the caller issued before); two calls forked at one
  point share one record;
- the join's record (last thing on the side stream): only when some wait reads it;
- an input kept alive for the side stream (``record_stream``): only a tensor the side stream did not make whose
  last use may come before the caller's stream joins (a name the caller reads again after the join needs none,
  and so does one an earlier call made on another side stream that issues nothing more before that join, and
  one the caller made when it runs no op from the call to the join);
- a result kept alive for the caller's stream: only when a later call on the same stream skips its fork, so the
  side stream could reuse the result's memory while the caller still reads it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

import attrs

from codegen.frontend.signature import Tensorness
from codegen.lower.flow import tidy
from codegen.lower.flow.analyze import Analysis
from codegen.lower.flow.arguments import Argument
from codegen.lower.flow.exprs import bound_names, data_reads, leaves, runs_op
from codegen.lower.flow.sites import Site
from codegen.lower.flow.state import State, pending
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
    Value,
    Wait,
    Wrap,
)

__all__ = [
    "SiteEvents",
    "SiteSync",
    "any_may",
    "argument_names",
    "lower_sites",
    "same_stream",
    "slot_node",
    "statement_blocks",
]


@attrs.frozen(kw_only=True)
class SiteEvents:
    """The fork and join events the caller's module defines for one planned call."""

    fork: EventRef
    join: EventRef


@attrs.frozen(kw_only=True)
class SiteSync:
    """How one site's fork is read at its joins."""

    cond: Cond | None  # the guard (or the flag) a must-join reads
    flag: str | None  # the local that says the call forked (set at the call)
    guard_text: str | None  # the guard's value as spelled at the call (after any bound argument)
    hoisted: tuple[tuple[int | str, str], ...]


def same_stream(state: State, site: Site, relations: Relations) -> set[str]:
    """The names that hold results the site's stream made itself (nothing to order or keep alive for it)."""
    return {n for p in pending(state) if relations.consume(p.site, site.index) == "none" for n in p.names}


@attrs.define(eq=False)
class _Lowering:
    fn: ast.FunctionDef | ast.AsyncFunctionDef
    sites: list[Site]
    syncs: list[SiteSync]
    result: Analysis
    relations: Relations
    current: CurrentStream
    events: Callable[[Site], SiteEvents]
    steps: dict[Anchor, list[Step]] = attrs.Factory(dict)
    waited: set[int] = attrs.Factory(set)  # sites whose join event some wait reads
    forks: list[bool] = attrs.Factory(list)
    kept: dict[tuple[str, str], ast.stmt] = attrs.Factory(dict)  # (name, tag) -> the call that kept it alive
    receiver: str | None = None
    blocks: dict[ast.stmt, list[ast.stmt]] = attrs.Factory(dict)  # each statement's block (``statement_blocks``)
    tensors: frozenset[str] = frozenset()  # the caller's names that certainly hold a tensor
    _anchored: list[bool] = attrs.Factory(list)  # per call so far: ordered after the caller's work before it
    forked_at: dict[ast.stmt, tuple[EventRef, str | None, frozenset[str]]] = attrs.Factory(dict)  # call -> its
    # fork's event, guard, and the streams that waited for it
    free: Callable[[ast.stmt], bool] | None = None  # the statement issues work on no side stream (stream_free.py)
    splits: dict[ast.stmt, tuple[str, ast.expr]] = attrs.Factory(dict)  # statement -> (name, its first operand)
    applied: dict[ast.stmt, str] = attrs.Factory(dict)  # the splits made: a wait stands before the statement
    simple: list[ast.stmt] = attrs.Factory(list)  # the function's statements that are not compound
    looped: set[ast.stmt] = attrs.Factory(set)  # the statements inside a loop of the function

    def run(self) -> CallerPlan:
        relays: dict[int, list[tuple[int, Step]]] = {}
        sure: dict[int, set[int]] = {}  # call -> the calls on other streams it surely waits for first
        joins: list[tuple[Anchor, Join]] = []
        for anchor, found in self.result.steps.items():
            for step in found:
                self.waited.add(step.site)
                if isinstance(step, Relay):
                    relays.setdefault(step.to, []).append((step.site, self._wait(step.site, step.may)))
                    if not step.may:
                        sure.setdefault(step.to, set()).add(step.site)
                else:
                    joins.append((anchor, step))
        self.forks = []
        for site in self.sites:
            self.forks.append(self._forks(site, sure.get(site.index, set())))
        for anchor, join in joins:
            waited = tidy.waited_with(join, anchor, joins, self._join_event, self.relations)
            self.steps.setdefault(anchor, []).extend(self._join(join, waited))
        split = self.applied = tidy.bound_before_waits(self.steps, self.splits)
        folded = self._folded({site.stmt: self._wrap(site, relays.get(site.index, [])) for site in self.sites})
        wraps = tidy.glued(folded, self.blocks, self.steps)
        unread = tidy.unread_flags(self.steps, wraps, {s.flag for s in self.syncs if s.flag and not s.guard_text})
        start = tuple(
            Assign(name=s.flag, value="False")
            for s, site in zip(self.syncs, self.sites)
            if s.flag and s.flag not in unread and any_may(self.result, site.index)
        )
        calls = {
            site.call.call: CallEdit(hoisted=sync.hoisted) for site, sync in zip(self.sites, self.syncs) if sync.hoisted
        }
        return CallerPlan(
            steps={k: tuple(v) for k, v in self.steps.items() if v},
            start=start,
            calls=calls,
            wraps=wraps,
            splits=split,
        )

    # -- decisions ---------------------------------------------------------------------------------
    def _forks(self, site: Site, relayed: set[int]) -> bool:
        """Whether the call must wait for the caller's stream: it reads what neither its stream nor a stream it
        surely waits for first (``relayed``) made, or nothing orders it after the caller's work: no earlier call
        on its stream forked on every path to it, and none of the streams it waits for did."""
        if not site.callee.auto:  # type: ignore[attr-defined]
            self._anchored.append(False)
            return False
        state = self.result.states.get(site.stmt, ())
        earlier = any(p.forked and self.relations.covers(p.site, site.index) for p in state)
        anchored = earlier or any(i < len(self._anchored) and self._anchored[i] for i in relayed)
        made = same_stream(state, site, self.relations).union(*(self.sites[i].names for i in relayed))
        forks = not (anchored and self._inputs(site) <= made)
        self._anchored.append(forks or anchored)
        return forks

    def _inputs(self, site: Site) -> set[str]:
        """The caller's names whose values the call reads (its arguments, bare or inside expressions)."""
        hoisted = dict(self.syncs[site.index].hoisted)
        return {name for argument in site.args for name in argument_names(argument, self.receiver, hoisted)}

    def _crossing(self, site: Site) -> list[Value]:
        """The inputs to keep alive for the call's stream (in argument order, each once in the function)."""
        state = self.result.states.get(site.stmt, ())
        own = same_stream(state, site, self.relations)
        values: list[Value] = []
        hoisted = dict(self.syncs[site.index].hoisted)
        join = self._surely_joined_at(site)
        quiet = join is not None and self._quiet_until(site, join)
        made_by_calls = {n for other in self.sites for n in bound_names(other.stmt)} if quiet else set()
        for argument in site.args:
            root = _viewed(argument.node) if argument.slot in hoisted else None
            for name in argument_names(argument, self.receiver, hoisted):
                key = (name, site.tag)
                if (
                    name in own
                    or self._kept_before(key, site.stmt)
                    or self._held_past_join(site, root or name)
                    or (join is not None and self._maker_idle(site, name, join))
                    or (quiet and name not in made_by_calls)  # made on the caller's stream
                ):
                    continue
                self.kept[key] = site.stmt
                whole = argument.bare or argument.slot in hoisted
                value = Value(name=name, tensor=argument.tensor) if whole else Value(name=name)
                values.append(attrs.evolve(value, tensor=Tensorness.TENSOR) if name in self.tensors else value)
        return values

    def _kept_before(self, key: tuple[str, str], stmt: ast.stmt) -> bool:
        """An earlier call of the same block kept this name alive for this stream, and nothing rebound it since."""
        earlier = self.kept.get(key)
        block = self.blocks.get(stmt, [stmt])
        if earlier is None or earlier not in block or block.index(earlier) > block.index(stmt):
            return False
        between = block[block.index(earlier) + 1 : block.index(stmt)]
        return not any(key[0] in bound_names(s) for s in between)

    def _held_past_join(self, site: Site, name: str) -> bool:
        """The caller reads ``name`` at or after every join of the call, and binds nothing to it in between."""
        if not site.callee.auto or site.stmt in self.looped or name in bound_names(site.stmt):  # type: ignore[attr-defined]
            return False  # a name the call's own statement rebinds holds its result afterwards, not the input
        joins = [
            anchor
            for anchor, found in self.result.steps.items()
            for step in found
            if isinstance(step, Join) and step.site == site.index
        ]
        if not joins or any(kind != "before" for kind, _, _ in joins):
            return False
        return all(
            stmt not in self.applied and _read_later(self.simple, self.blocks.get(stmt, [stmt]), site.stmt, stmt, name)
            for _, stmt, _ in joins
        )  # a split statement reads its first operand's names before the wait

    def _maker_idle(self, site: Site, name: str, join: ast.stmt) -> bool:
        """``name`` holds what an earlier call of the block made on another side stream M, and M issues nothing
        more before the caller joins the call's stream (before ``join``): no later call on M, and only
        stream-free code (``free``) until then. M's memory then goes to no allocation while the call reads it."""
        maker = self._maker(site, name)
        if maker is None or self.free is None or join in self.applied:
            return False
        block = self.blocks.get(site.stmt, [site.stmt])
        run = block[block.index(site.stmt) : block.index(join)]
        later = any(
            o.tag == maker.tag and (o.stmt.lineno, o.index) > (site.stmt.lineno, site.index) for o in self.sites
        )
        return not later and all(self.free(s) and not leaves(s) for s in run)

    def _quiet_until(self, site: Site, join: ast.stmt) -> bool:
        """The caller's stream runs no op from the call to its join before ``join`` (calls of other stream
        functions with plain arguments run on their own streams): nothing it made can go to a new allocation
        while the call reads it."""
        if join in self.applied:
            return False  # its first operand runs before the wait
        block = self.blocks.get(site.stmt, [site.stmt])
        run = block[block.index(site.stmt) + 1 : block.index(join)]
        planned = {other.stmt: other for other in self.sites}
        return not any(leaves(s) or (runs_op(s) and not self._runs_aside(planned.get(s))) for s in run)

    def _runs_aside(self, other: Site | None) -> bool:
        return other is not None and not self.syncs[other.index].hoisted

    def _maker(self, site: Site, name: str) -> Site | None:
        """The earlier call of ``site``'s block, on another stream under the same guard, whose result ``name``
        surely holds (nothing binds it in between); None if there is none, or the call is in a loop."""
        block = self.blocks.get(site.stmt, [site.stmt])
        found = [self.sites[p.site] for p in pending(self.result.states.get(site.stmt, ())) if name in p.names]
        if len(found) != 1 or site.stmt in self.looped:
            return None
        maker = found[0]
        if maker.tag == site.tag or maker.stmt not in block or block.index(maker.stmt) >= block.index(site.stmt):
            return None
        same_guard = self.syncs[maker.index].guard_text == self.syncs[site.index].guard_text
        if not same_guard or self.syncs[maker.index].flag or self.syncs[site.index].flag:
            return None
        between = block[block.index(maker.stmt) + 1 : block.index(site.stmt)]
        return None if any(name in bound_names(s) for s in between) else maker

    def _surely_joined_at(self, site: Site) -> ast.stmt | None:
        """The statement of ``site``'s block after it before which the caller always joins its stream."""
        block = self.blocks.get(site.stmt, [site.stmt])
        for anchor, found in self.result.steps.items():
            kind, stmt, _ = anchor
            joins = [s for s in found if isinstance(s, Join) and s.site == site.index]
            if joins and kind == "before" and stmt in block and block.index(stmt) > block.index(site.stmt):
                return stmt  # type: ignore[no-any-return]
        return None

    def _keeps_results(self, site: Site) -> bool:
        """A later call on the same stream skips its fork: its allocations could reuse a result still being read."""
        line = site.stmt.lineno
        loop = site.stmt in self.looped
        return any(
            other.tag == site.tag and not fork and (loop or other.stmt.lineno > line)
            for other, fork in zip(self.sites, self.forks)
            if other is not site
        )

    # -- steps -------------------------------------------------------------------------------------
    def _when(self, site: int, may: bool) -> Cond | None:
        sync = self.syncs[site]
        return Cond.of(sync.flag) if may and sync.flag else sync.cond

    def _wait(self, site: int, may: bool) -> Wait:
        return Wait(event=self.events(self.sites[site]).join, when=self._when(site, may))

    def _join_event(self, site: int) -> EventRef:
        return self.events(self.sites[site]).join

    def _join(self, step: Join, waited: bool = False) -> list[Step]:
        out: list[Step] = [] if waited else [self._wait(step.site, step.may)]
        made = step.names - _state_made_elsewhere(self.sites[step.site])
        if made and self._keeps_results(self.sites[step.site]):
            values = tuple(Value(name=n) for n in sorted(made))
            out.append(KeepAlive(stream=self.current, when=self._when(step.site, step.may), values=values))
        return out

    def _folded(self, wraps: dict[ast.stmt, Wrap]) -> dict[ast.stmt, Wrap]:
        """Consecutive calls on one stream share one ``with``: the inputs a later one keeps alive are kept with
        the first one's (one guarded block), unless the first one's statement binds them."""
        for stmt, wrap in list(wraps.items()):
            block = self.blocks.get(stmt, [stmt])
            at = block.index(stmt)
            first = block[at - 1] if at else None
            keep = [s for s in wrap.enter if isinstance(s, KeepAlive)]
            if (
                first not in wraps
                or len(keep) != 1
                or len(wrap.enter) != 1
                or wraps[first].switch != wrap.switch
                or self.steps.get(("before", stmt, ""))
                or self.steps.get(("after", first, ""))
                or wraps[first].leave
                or {v.name for v in keep[0].values} & bound_names(first)
            ):
                continue
            earlier = wraps[first]
            kept = [s for s in earlier.enter if isinstance(s, KeepAlive) and s.stream == keep[0].stream]
            moved = attrs.evolve(kept[0], values=(*kept[0].values, *keep[0].values)) if kept else keep[0]
            enter = tuple(moved if s is (kept[0] if kept else None) else s for s in earlier.enter)
            wraps[first] = attrs.evolve(earlier, enter=enter if kept else (*earlier.enter, moved))
            wraps[stmt] = attrs.evolve(wrap, enter=())
        return wraps

    def _same_point(
        self, site: Site, sync: SiteSync, before: list[Step]
    ) -> tuple[EventRef, str | None, frozenset[str]] | None:
        """The fork of the call just before this one, when nothing runs on the caller's stream between the two
        (one record serves both; on the same stream, its wait does too)."""
        block = self.blocks.get(site.stmt, [site.stmt])
        at = block.index(site.stmt)
        if at == 0 or before or sync.flag or self.steps.get(("before", site.stmt, "")):
            return None
        found = self.forked_at.get(block[at - 1])
        return found if found is not None and found[1] == sync.guard_text else None

    def _wrap(self, site: Site, relayed: list[tuple[int, Step]]) -> Wrap:
        sync = self.syncs[site.index]
        guard = Cond.of(sync.flag) if sync.flag and sync.guard_text else Cond.of(sync.guard_text)
        before: list[Step] = [
            Assign(name=name, value=ast.unparse(slot_node(site.call.call, slot))) for slot, name in sync.hoisted
        ]
        if sync.flag and sync.guard_text:
            before.append(Assign(name=sync.flag, value=sync.guard_text))
        events = self.events(site)
        enter: list[Step] = []
        shared = self._same_point(site, sync, before)
        if self.forks[site.index] and shared is None:
            before.append(Record(event=events.fork, when=guard))
            enter.append(Wait(event=events.fork, when=guard))
            self.forked_at[site.stmt] = (events.fork, sync.guard_text, frozenset({site.tag}))
        elif self.forks[site.index]:  # the same point: wait for that fork's record, once per stream
            # (a wait for the join of a call forked at that point covers it: that stream waited for it first)
            after_fork = any(self.forked_at.get(self.sites[i].stmt, (None,))[0] == shared[0] for i, _ in relayed)
            if site.tag not in shared[2] and not after_fork:
                enter.append(Wait(event=shared[0], when=guard))
            self.forked_at[site.stmt] = (shared[0], shared[1], shared[2] | {site.tag})
        enter += [wait for _, wait in relayed]
        values = self._crossing(site)
        if values:
            enter.append(KeepAlive(stream=site.tag, when=guard, values=tuple(values)))
        if before:
            self.steps.setdefault(("before", site.stmt, ""), []).extend(before)
        if sync.flag and not sync.guard_text:
            self.steps.setdefault(("after", site.stmt, ""), []).append(Assign(name=sync.flag, value="True"))
        waited = {self.events(self.sites[i]).join.var for i in self.waited}
        leave = (Record(event=events.join, when=guard),) if events.join.var in waited else ()
        priority = site.callee.priority  # type: ignore[attr-defined]
        return Wrap(switch=SwitchStream(tag=site.tag, priority=priority, when=guard), enter=tuple(enter), leave=leave)


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
) -> CallerPlan:
    """``receiver``: the caller's ``self`` (its state lives on: never kept alive); ``tensors``: its names that
    certainly hold a tensor; ``free``: whether a statement issues work on no side stream; ``splits``: statements
    whose first operand is bound to a name before their joins (``split.py``)."""
    return _Lowering(
        fn=fn,
        sites=sites,
        syncs=syncs,
        result=result,
        relations=relations,
        current=current,
        events=events,
        receiver=receiver,
        tensors=tensors,
        blocks=statement_blocks(fn),
        free=free,
        splits=splits or {},
        simple=[s for s in _statements(fn) if not isinstance(s, _COMPOUND)],
        looped=_in_loops(fn),
    ).run()


def _state_made_elsewhere(site: Site) -> frozenset[str]:
    """``self.buf`` of a callee that only writes ``buf`` in place: no memory of its stream to keep alive."""
    receiver = site.call.resolved.receiver
    in_place = site.callee.state_in_place  # type: ignore[attr-defined]
    return frozenset(f"{receiver}.{attr}" for attr in in_place) if receiver else frozenset()


def argument_names(argument: Argument, receiver: str | None, hoisted: dict[int | str, str]) -> list[str]:
    """The caller's names whose memory an argument hands to the call: the name passed whole (or the name it was
    bound to), or the names an expression reads as values (``x`` in ``x[i]``; not ``cfg`` in ``cfg.scale``, state
    that lives on)."""
    if argument.slot in hoisted:
        return [hoisted[argument.slot]]
    if argument.bare and argument.name:
        return [argument.name]
    skipped: set[int] = set()
    for node in ast.walk(argument.node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            skipped.add(id(node.func))
    state = {
        id(n.value)
        for n in ast.walk(argument.node)
        if isinstance(n, (ast.Attribute, ast.Subscript))
        and id(n) not in skipped
        and isinstance(n.value, ast.Name)
        and isinstance(n, ast.Attribute)
    }
    names = {
        n.id
        for n in ast.walk(argument.node)
        if isinstance(n, ast.Name) and id(n) not in state and not isinstance(n.ctx, ast.Store)
    }
    return sorted((names & data_reads(argument.node)) - {receiver})


def any_may(result: Analysis, site: int) -> bool:
    return any(s.site == site and s.may for found in result.steps.values() for s in found)


def slot_node(call: ast.Call, slot: int | str) -> ast.expr:
    if isinstance(slot, int):
        node = call.args[slot]
        return node.value if isinstance(node, ast.Starred) else node
    return next(k.value for k in call.keywords if (k.arg or "**") == slot)


def _statements(node: ast.AST) -> Iterable[ast.stmt]:
    return (n for n in ast.walk(node) if isinstance(n, ast.stmt) and n is not node)


def _viewed(node: ast.expr) -> str | None:
    """The name whose memory an index or slice chain of it shares (``x[:n]``, ``x[0].y``); None otherwise."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def statement_blocks(fn: ast.AST) -> dict[ast.stmt, list[ast.stmt]]:
    """Each statement's block (the list it stands in)."""
    found: dict[ast.stmt, list[ast.stmt]] = {}
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                found.update({stmt: block for stmt in block if isinstance(stmt, ast.stmt)})
    return found


def _in_loops(fn: ast.AST) -> set[ast.stmt]:
    loops = [node for node in ast.walk(fn) if isinstance(node, (ast.For, ast.AsyncFor, ast.While))]
    return {stmt for loop in loops for stmt in _statements(loop)}


def _read_later(simple: list[ast.stmt], block: list[ast.stmt], call: ast.stmt, join: ast.stmt, name: str) -> bool:
    """``name`` is read at the join or by a statement after it that surely runs (same block, before any compound
    statement or jump), and nothing binds it between the call and that read (``simple``: the function's
    statements that are not compound)."""
    between = [s for s in simple if call.lineno < s.lineno < join.lineno]
    if any(name in bound_names(s) for s in between):
        return False
    for stmt in block[block.index(join) :]:
        if isinstance(stmt, _COMPOUND):
            return False
        if name in data_reads(stmt):
            return True
        if name in bound_names(stmt) or isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return False
    return False


_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.Match,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)
