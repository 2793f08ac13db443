"""Which calls' join records some wait reads: a record no wait can read is not written.

A call records its join event as its last work, and a wait for that event reads the latest record of it on the
path the caller took. Two calls of one callee share the event, so a record the other call always renews before any
wait runs is read by none: ``b`` and ``a`` on stream ``s``, then, under ``if self.again:``, ``a`` joined and ``side_b``
called again; the wait for ``b`` runs under the flag that second call sets, after its record, and the first call's
record is read by no wait (the wait for ``a`` orders it). Records are decided per call, not per event.

The walk carries, for each path, the latest record of each join event (by call) and the calls with a flag that
forked on it; merged paths keep every such pair. A wait marks read the latest record on every path where it runs:
a wait under a call's flag runs only where that call forked. A wait on a path with no record of its event yet keeps
every record of it (a guard may have skipped the call; its earlier run's record is read). Loops run to a fixed point;
a handler or ``finally`` may start from any point of its ``try``. Where the paths grow past a bound, every record is
kept.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

import attrs

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.transfer import Join, Relay

__all__ = ["read_records"]

_LIMIT = 256  # path summaries at one point; past it every record is kept
_LOOPS = 40

Anchor = tuple[str, ast.AST, str]
Summary = tuple[frozenset[tuple[str, int]], frozenset[int]]  # (event, call) latest records; calls forked (flagged)
Paths = frozenset[Summary]
Wait = tuple[str, int | None]  # the event, and the call whose flag the wait reads (None: it runs on every path)


class _Overflow(Exception):
    """Too many paths: keep every record."""


@attrs.define(eq=False)
class _Loop:
    breaks: set[Summary] = attrs.Factory(set)
    continues: set[Summary] = attrs.Factory(set)


@attrs.define(eq=False)
class _Walk:
    waits: dict[Anchor, list[Wait]]  # waits placed at each anchor of the analysis
    relayed: dict[ast.stmt, list[Wait]]  # the waits first in a call's block (relays into it)
    records: dict[ast.stmt, tuple[int, str, bool, bool]]  # call -> (site, its event, guarded, flagged)
    events: dict[str, frozenset[int]]  # event -> the calls recording it
    read: set[int] = attrs.Factory(set)
    loops: list[_Loop] = attrs.Factory(list)
    raises: list[set[Summary]] = attrs.Factory(list)

    def wait(self, paths: Paths, found: list[Wait]) -> None:
        for event, flag in found:
            for latest, forked in paths:
                if flag is None or flag in forked:
                    last = next((site for e, site in latest if e == event), None)
                    self.read.update(self.events.get(event, frozenset()) if last is None else {last})

    def block(self, stmts: list[ast.stmt], paths: Paths, owner: ast.AST | None = None, field: str = "") -> Paths:
        for stmt in stmts:
            if not paths:
                return paths
            paths = self.statement(stmt, paths)
        if owner is not None and paths:
            self.wait(paths, self.waits.get(("end", owner, field), []))
        return paths

    def statement(self, stmt: ast.stmt, paths: Paths) -> Paths:
        self.wait(paths, self.waits.get(("before", stmt, ""), []))
        for frame in self.raises:
            frame.update(paths)
        handler = getattr(self, f"_{type(stmt).__name__}", None)
        return handler(stmt, paths) if handler else self._simple(stmt, paths)

    def _simple(self, stmt: ast.stmt, paths: Paths) -> Paths:
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return frozenset()
        self.wait(paths, self.relayed.get(stmt, []))
        if stmt not in self.records:
            return paths
        site, event, guarded, flagged = self.records[stmt]
        after = frozenset(_recorded(s, site, event, flagged) for s in paths)
        return _bounded(after | paths if guarded else after)

    def _Break(self, stmt: ast.Break, paths: Paths) -> Paths:
        self.loops[-1].breaks.update(paths)
        return frozenset()

    def _Continue(self, stmt: ast.Continue, paths: Paths) -> Paths:
        self.loops[-1].continues.update(paths)
        return frozenset()

    def _If(self, stmt: ast.If, paths: Paths) -> Paths:
        return self.block(stmt.body, paths, stmt, "body") | self.block(stmt.orelse, paths, stmt, "orelse")

    def _With(self, stmt: ast.With | ast.AsyncWith, paths: Paths) -> Paths:
        return self.block(stmt.body, paths, stmt, "body")

    _AsyncWith = _With

    def _FunctionDef(self, stmt: ast.AST, paths: Paths) -> Paths:
        return paths

    _AsyncFunctionDef = _ClassDef = _FunctionDef

    def _Match(self, stmt: ast.Match, paths: Paths) -> Paths:
        outs = [self.block(case.body, paths) for case in stmt.cases]
        return frozenset().union(paths, *outs)

    def _Try(self, stmt: ast.Try | ast.TryStar, paths: Paths) -> Paths:
        frame: set[Summary] = set(paths)
        self.raises.append(frame)
        body = self.block(stmt.body, paths, stmt, "body")
        self.raises.pop()
        caught = _bounded(frozenset(frame) | body)
        outs = [self.block(h.body, caught) for h in stmt.handlers]
        done = self.block(stmt.orelse, body, stmt, "orelse") if stmt.orelse else body
        if not stmt.finalbody:
            return frozenset().union(done, *outs)
        return self.block(stmt.finalbody, frozenset().union(caught, done, *outs), stmt, "finalbody")

    _TryStar = _Try

    def _For(self, stmt: ast.For | ast.AsyncFor | ast.While, paths: Paths) -> Paths:
        head, loop = paths, _Loop()
        for _ in range(_LOOPS):
            loop = _Loop()
            self.loops.append(loop)
            out = self.block(stmt.body, head, stmt, "body")
            self.loops.pop()
            grown = _bounded(head | out | frozenset(loop.continues))
            if grown == head:
                break
            head = grown
        else:
            raise _Overflow
        exits = self.block(stmt.orelse, head, stmt, "orelse") if stmt.orelse else head
        return _bounded(exits | frozenset(loop.breaks))

    _AsyncFor = _While = _For


def _recorded(summary: Summary, site: int, event: str, flagged: bool) -> Summary:
    latest, forked = summary
    latest = frozenset((e, s) for e, s in latest if e != event) | {(event, site)}
    return latest, forked | {site} if flagged else forked


def _bounded(paths: Paths) -> Paths:
    if len(paths) > _LIMIT:
        raise _Overflow
    return paths


def read_records(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, facts: CallerFacts, events: list[str], waited: Collection[int]
) -> set[int]:
    """The calls (by site index) whose join record some wait may read; ``events``: the join event each call records
    (by site index); ``waited``: the calls some join or relay waits for. Where the paths are too many to tell, every
    call recording an event some of them waits for."""
    flags = {i for i, sync in enumerate(facts.syncs) if sync.flag}
    waits: dict[Anchor, list[Wait]] = {}
    relayed: dict[ast.stmt, list[Wait]] = {}
    for anchor, steps in facts.result.steps.items():
        for step in steps:
            wait = (events[step.site], step.site if step.site in flags else None)
            if isinstance(step, Join):
                waits.setdefault(anchor, []).append(wait)
            elif isinstance(step, Relay):
                relayed.setdefault(facts.sites[step.to].stmt, []).append(wait)
    records = {site.stmt: _record(facts, site.index, events, flags) for site in facts.sites}
    recorders: dict[str, set[int]] = {}
    for index, event in enumerate(events):
        recorders.setdefault(event, set()).add(index)
    walk = _Walk(waits, relayed, records, {e: frozenset(s) for e, s in recorders.items()})
    try:
        walk.block(fn.body, frozenset({(frozenset(), frozenset())}), fn, "body")
    except _Overflow:
        return {i for i, event in enumerate(events) if event in {events[w] for w in waited}}
    return walk.read


def _record(facts: CallerFacts, index: int, events: list[str], flags: set[int]) -> tuple[int, str, bool, bool]:
    sync = facts.syncs[index]
    guarded = bool(sync.guard_text) or facts.sites[index].guard.dynamic
    return index, events[index], guarded, index in flags
