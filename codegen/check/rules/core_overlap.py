"""Whether two core-limited functions of one module may run at once (NPD302), read from the planner's schedule.

Two limits meet only where a call that runs one may be issued while a call that runs the other is still pending:
a stream call runs on its stream from its fork to its join (:mod:`codegen.lower.flow.pending_points` reads the
planner's state at every statement), and a call runs whatever the functions it reaches run
(:mod:`codegen.check.rules.module_calls`). So ``a`` and ``b`` meet when a call ``s`` whose run reaches ``a`` is
pending at a statement whose own calls reach ``b`` (or the other way round). A call that does not fork at its own
statement (the next call of a stream, a call that reuses an earlier fork record) is ordered only after that
earlier point: from there to its statement, what the caller issues and what is pending meet it too.

Where the schedule is not visible, every pair may meet, as NPD302 always read it: a target that orders streams
through data (GE: no join bounds a call), a function the module never calls where the graph sees it (no visible
call site), one reached by a function that escapes the graph, by a ``sync="manual"`` stream function, by a stream
function this module never calls or another file of the run calls (it may be forked there, so a file checked alone
reports such a pair too), or by a generator or coroutine (its calls may stay pending across a ``yield`` or an
``await``).
"""

from __future__ import annotations

import ast

import attrs

from codegen.check.rules.base import Context
from codegen.check.rules.module_calls import ModuleCalls, statements
from codegen.frontend.ir import StreamFunction
from codegen.lower.flow.pending_points import CallerPoints, pending_points
from codegen.lower.flow.sites import Site
from codegen.lower.flow.state import State
from codegen.targets import get_target

__all__ = ["may_overlap"]

_MEMO = "core_overlap"


def may_overlap(ctx: Context, a: StreamFunction, b: StreamFunction) -> bool:
    """The calls of ``a`` and ``b`` may run at once (by the schedule this module is transformed with)."""
    if ctx.tree is None or ctx.source is None or not get_target(ctx.target).event_sync:
        return True
    schedule = ctx.memo.get(_MEMO)
    if not isinstance(schedule, _Schedule):
        schedule = ctx.memo[_MEMO] = _Schedule(ctx, ctx.tree, ctx.source)
    return schedule.unseen(a.qualname) or schedule.unseen(b.qualname) or schedule.meet(a.qualname, b.qualname)


@attrs.define(eq=False)
class _Schedule:
    ctx: Context
    tree: ast.Module
    source: str
    calls: ModuleCalls = attrs.field(init=False)
    points: dict[str, CallerPoints] = attrs.field(init=False)
    opened: frozenset[str] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        ir, index = self.ctx.ir, self.ctx.index
        self.calls = ModuleCalls(module=ir.module_name, tree=self.tree, index=index)
        self.points = pending_points(ir, self.tree, index, self.source)
        self.opened = self.calls.escaping() | self._unseen_streams() | self._suspending()

    def unseen(self, qualname: str) -> bool:
        """``qualname`` may run where the schedule does not show it."""
        if not self.calls.called(qualname):
            return True
        return any(qualname in self.calls.runs(q) for q in self.opened)

    def meet(self, first: str, second: str) -> bool:
        """A call pending while the other function may be issued, in some caller of the module."""
        for points in self.points.values():
            for site in points.sites:
                runs = self._runs(site)
                for mine, other in ((first, second), (second, first)):
                    if mine in runs and self._beside(points, site, other):
                        return True
        return False

    def _beside(self, points: CallerPoints, site: Site, other: str) -> bool:
        """``other`` may be issued, or be pending, while ``site`` may run."""
        early = self._unordered(points, site)
        pending = [stmt for stmt, state in points.during.items() if _pending(state, site.index)]
        if any(other in self.calls.issued(stmt) for stmt in [*pending, *early]):
            return True
        return any(
            other in self._runs(points.sites[p.site])
            for stmt in early
            for p in points.during[stmt]
            if p.pending and p.site != site.index
        )

    def _unordered(self, points: CallerPoints, site: Site) -> list[ast.stmt]:
        """The statements between the earlier point a call that does not fork at its own statement is ordered
        after (a call before it on every path: its fork record) and the call."""
        if site.stmt in points.self_forked:
            return []
        anchors = {p.site for p in points.before.get(site.stmt, ()) if p.site != site.index}
        starts = {points.sites[i].stmt for i in anchors}
        return [
            stmt
            for stmt, state in points.before.items()
            if stmt is not site.stmt
            and not _present(state, site.index)
            and (stmt in starts or any(_present(state, i) for i in anchors))
        ]

    def _runs(self, site: Site) -> frozenset[str]:
        module, _, qualname = site.callee.key.partition(":")  # type: ignore[attr-defined]
        return (
            self.calls.runs(qualname)
            if module == self.ctx.ir.module_name and qualname in self.calls.functions
            else frozenset()
        )

    def _unseen_streams(self) -> frozenset[str]:
        """Manual stream functions, and those the module never calls or another file of the run calls (another
        file may fork them whenever it is transformed with this one)."""
        module = self.ctx.ir.module_name
        found = set()
        for fn in self.ctx.ir.functions:
            calls = self.ctx.index.stream_calls.get(self.ctx.key(fn), ())
            elsewhere = not self.calls.called(fn.qualname) or any(c.module != module for c in calls)
            if fn.stream is not None and (not fn.auto_sync or elsewhere):
                found.add(fn.qualname)
        return frozenset(found)

    def _suspending(self) -> frozenset[str]:
        """Generators and coroutines: the caller runs between their statements."""
        return frozenset(
            q
            for q, fn in self.calls.functions.items()
            if isinstance(fn, ast.AsyncFunctionDef) or any(_suspends(s) for s in statements(fn))
        )


def _suspends(stmt: ast.stmt) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(stmt))


def _pending(state: State, site: int) -> bool:
    return any(p.site == site and p.pending for p in state)


def _present(state: State, site: int) -> bool:
    return any(p.site == site for p in state)
