"""The walk behind :mod:`~codegen.lower.flow.read_records`: one join event's records along a caller's paths.

Each path is summarized by the call whose record of the event is the latest on it, and the calls with a flag that
forked on it (a wait under a call's flag runs only where that call forked); merged paths keep every summary. A
wait marks read the latest record in every summary where it runs, and every record of its event where a summary
has none yet. ``if``/``elif``/``else``, ``match``, ``with``, loops (to a fixed point, with ``break`` and
``continue``), ``try`` (a handler or ``finally`` may start from any point of its body) and ``return`` are followed;
a nested definition runs nothing here. Past a bound on the summaries at one point the walk gives up (``Overflow``).
"""

from __future__ import annotations

import ast

import attrs

__all__ = ["Anchor", "Overflow", "Paths", "RecordWalk", "Wait"]

_LIMIT = 256  # path summaries at one point
_LOOPS = 40

Anchor = tuple[str, ast.AST, str]
Summary = tuple[frozenset[tuple[str, int]], frozenset[int]]  # (event, call) latest records; calls forked (flagged)
Paths = frozenset[Summary]
Wait = tuple[str, int | None]  # the event, and the call whose flag the wait reads (None: it runs on every path)


class Overflow(Exception):
    """Too many paths to tell."""


@attrs.define(eq=False)
class _Loop:
    breaks: set[Summary] = attrs.Factory(set)
    continues: set[Summary] = attrs.Factory(set)


@attrs.define(eq=False)
class RecordWalk:
    """One event's records and waits (placed by the analysis), walked along a caller's statements."""

    waits: dict[Anchor, list[Wait]]  # waits placed at each anchor of the analysis
    relayed: dict[ast.stmt, list[Wait]]  # the waits first in a call's block (relays into it)
    records: dict[ast.stmt, tuple[int, str, bool, bool]]  # call -> (site, its event, guarded, flagged)
    events: dict[str, frozenset[int]]  # event -> the calls recording it
    read: set[int] = attrs.Factory(set)
    seen: set[object] = attrs.Factory(set)  # the anchors and calls walked (a wait not walked keeps every record)
    loops: list[_Loop] = attrs.Factory(list)
    raises: list[set[Summary]] = attrs.Factory(list)

    def wait(self, paths: Paths, found: list[Wait], at: object) -> None:
        self.seen.add(at)
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
            self.wait(paths, self.waits.get(("end", owner, field), []), ("end", owner, field))
        return paths

    def statement(self, stmt: ast.stmt, paths: Paths) -> Paths:
        self.wait(paths, self.waits.get(("before", stmt, ""), []), ("before", stmt, ""))
        for frame in self.raises:
            frame.update(paths)
        handler = getattr(self, f"_{type(stmt).__name__}", None)
        return handler(stmt, paths) if handler else self._simple(stmt, paths)

    def _simple(self, stmt: ast.stmt, paths: Paths) -> Paths:
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return frozenset()
        self.wait(paths, self.relayed.get(stmt, []), stmt)
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
            raise Overflow
        exits = self.block(stmt.orelse, head, stmt, "orelse") if stmt.orelse else head
        return _bounded(exits | frozenset(loop.breaks))

    _AsyncFor = _While = _For


def _recorded(summary: Summary, site: int, event: str, flagged: bool) -> Summary:
    """The path after ``site`` records ``event``."""
    latest, forked = summary
    latest = frozenset((e, s) for e, s in latest if e != event) | {(event, site)}
    return latest, forked | {site} if flagged else forked


def _bounded(paths: Paths) -> Paths:
    if len(paths) > _LIMIT:
        raise Overflow
    return paths
