"""The sync analysis of one caller: where each planned stream call is joined, on exactly the paths it forked.

A structured walk over the function's statements carries the pending calls (:mod:`codegen.lower.flow.state`) through
``if``/``elif``/``else`` and ``match`` (``branch_walks.py``), loops (to a fixed point, so a result carried into the next
iteration is joined before its use there: ``loop_fixpoint.py``; what a ``for`` body reads or joins first is joined
before the loop: ``loop_entry_joins.py``), ``try``/``except``/``else``/``finally`` (``try_finally.py``), ``with``, early
``return``, ``break`` and ``continue``; a name a compound statement binds no longer holds what it held
(``compound_binds.py``), and what its header writes is joined before it as for a plain statement
(``header_joins.py``). Steps are placed *before* a statement, or at the *end* of a block (a loop body whose ``while``
test reads a result; the end of the function).
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow import early
from codegen.lower.flow.analysis import Analysis, Anchor, merged
from codegen.lower.flow.branch_walks import walk_if, walk_match
from codegen.lower.flow.compound_binds import unbound
from codegen.lower.flow.exprs import data_reads, loaded_names
from codegen.lower.flow.fixed_tests import FixedTests, fixed_tests
from codegen.lower.flow.header_joins import header_joins
from codegen.lower.flow.last_iteration import LastIterations
from codegen.lower.flow.loop_entry_joins import before_loop
from codegen.lower.flow.loop_fixpoint import Loop, walk_loop
from codegen.lower.flow.loop_parity import iteration_start
from codegen.lower.flow.state import EMPTY, Pending, State, joined, pending
from codegen.lower.flow.transfer import Join, Relations, SiteView, Step, join_step, minimal_joins, transfer
from codegen.lower.flow.try_finally import walk_try

__all__ = ["Analysis", "Anchor", "Walk", "analyze"]


@attrs.define(eq=False)
class Walk:
    sites: dict[ast.stmt, SiteView]
    relations: Relations
    barriers: frozenset[ast.stmt] = frozenset()
    methods: frozenset[str] = frozenset()  # the caller's own methods: calling one may read its object's state
    result: Analysis = attrs.Factory(Analysis)
    recording: bool = True
    loops: list[Loop] = attrs.Factory(list)
    raises: list[list[State]] = attrs.Factory(list)
    ahead: early.Lookahead = attrs.field(kw_only=True)  # what the statements after a point do first
    fixed: FixedTests = attrs.field(kw_only=True, factory=FixedTests)  # tests read one value (``fixed_tests.py``)
    last: LastIterations = attrs.field(kw_only=True, factory=LastIterations)  # ``last_iteration.py``
    lasting: set[ast.For] = attrs.field(kw_only=True, factory=set)  # loops walked as their last iteration

    def place(self, anchor: Anchor, steps: list[Step]) -> None:
        """Record ``steps`` at ``anchor``; a step placed twice there (two analyses of one block) is *may*
        if either placement was."""
        if not (self.recording and steps):
            return
        known = self.result.steps.setdefault(anchor, [])
        for step in (self._retested(s, anchor) for s in steps):
            same = next((i for i, k in enumerate(known) if attrs.evolve(k, may=step.may) == step), None)
            if same is None:
                known.append(step)
                continue
            known[same] = merged(known[same], step)

    def _retested(self, step: Step, anchor: Anchor) -> Step:
        """A join keeps of its facts those whose test ran on every path to ``anchor`` (its wait re-reads them)."""
        if not (isinstance(step, Join) and step.where):
            return step
        return attrs.evolve(step, where=self.fixed.retested(step.site, step.where, anchor))

    def join_reads(self, stmt: ast.AST, state: State, reads: set[str], anchor: Anchor | None = None) -> State:
        """Join, before ``anchor`` (default: before ``stmt``), every call whose result ``reads`` touches; a test
        reading this micro-batch's item reads none of an earlier iteration's call (``item_apart.py``)."""
        joins = [join_step(p, state) for p in pending(state) if p.names & (reads - self._apart(stmt, p.site))]
        self.place(anchor or ("before", stmt, ""), [*minimal_joins(joins, state)])
        return joined(state, (j.site for j in joins))

    def _apart(self, stmt: ast.AST, site: int) -> frozenset[str]:
        slots = getattr(self.relations, "slots", None)
        return slots.apart_of(stmt, site) if slots is not None and isinstance(stmt, ast.stmt) else frozenset()

    def early_joins(self, stmt: ast.stmt, found: list[Pending], state: State) -> State:
        """Join ``found`` before ``stmt`` (the lowering waits once per event, :mod:`codegen.lower.flow.wraps`), but
        for a call another of them covers on every path (a later call on its stream: its join orders both)."""
        self.place(("before", stmt, ""), [*minimal_joins([join_step(p, state) for p in found], state)])
        return joined(state, (p.site for p in found))

    def block(self, stmts: list[ast.stmt], state: State | None) -> State | None:
        for stmt in stmts:
            if state is None:
                return None
            for frame in self.raises:
                frame.append(state)
            state = self.statement(stmt, state)
        return state

    def statement(self, stmt: ast.stmt, state: State) -> State | None:
        handler = getattr(self, f"_{type(stmt).__name__}", None)
        return handler(stmt, header_joins(self, stmt, state)) if handler else self.simple(stmt, state)

    def simple(self, stmt: ast.stmt, state: State) -> State | None:
        if self.recording and stmt in self.sites:
            self.result.states[stmt] = state
        if stmt in self.barriers:  # the graph breaks here: fork and join must stay in one graph
            state = self.early_joins(stmt, pending(state), state)
        view = self.sites.get(stmt)
        if view is not None:
            state = self.early_joins(stmt, self.ahead.read_again(stmt, view, state), state)
        steps, after = transfer(stmt, state, view, self.relations, self.methods)
        self.place(("before", stmt, ""), steps)
        self._split(stmt, state, view, steps)
        return None if isinstance(stmt, (ast.Return, ast.Raise)) else after

    def _split(self, stmt: ast.stmt, state: State, view: SiteView | None, steps: list[Step]) -> None:
        """A plain statement that joins a call: record the first operand it may compute before the join
        (``early.py``)."""
        joins = view is None and stmt not in self.barriers and any(isinstance(s, Join) for s in steps)
        first = self.ahead.first_operand(stmt, state) if joins else None
        if self.recording and first is not None:
            self.result.splits[stmt] = first

    def _Break(self, stmt: ast.Break, state: State) -> None:
        self.loops[-1].breaks.append(state)

    def _Continue(self, stmt: ast.Continue, state: State) -> None:
        self.loops[-1].continues.append((stmt, state))

    def _If(self, stmt: ast.If, state: State) -> State | None:
        return walk_if(self, stmt, state)

    def _With(self, stmt: ast.With | ast.AsyncWith, state: State) -> State | None:
        reads = set().union(*(data_reads(item.context_expr) for item in stmt.items))
        state = unbound(self.join_reads(stmt, state, reads), stmt.items)
        return self.block(stmt.body, state)

    _AsyncWith = _With

    def _FunctionDef(self, stmt: ast.AST, state: State) -> State:
        """A nested definition may read any name it mentions, whenever it runs: join them now."""
        state = self.join_reads(stmt, state, loaded_names(stmt))
        return unbound(state, [stmt])

    _AsyncFunctionDef = _ClassDef = _FunctionDef

    def _Match(self, stmt: ast.Match, state: State) -> State | None:
        return walk_match(self, stmt, state)

    def _Try(self, stmt: ast.Try | ast.TryStar, state: State) -> State | None:
        return walk_try(self, stmt, state)

    _TryStar = _Try

    def _For(self, stmt: ast.For | ast.AsyncFor, state: State) -> State | None:
        slots = getattr(self.relations, "slots", None)
        state = before_loop(self, stmt, state)  # what its header and first work read or join (loop_entry_joins.py)
        after = walk_loop(self, stmt, state, lambda s: iteration_start(self.relations, stmt, s), None)
        return slots.swept(stmt, after) if slots and after is not None else after

    _AsyncFor = _For

    def _While(self, stmt: ast.While, state: State) -> State | None:
        test = data_reads(stmt.test)
        state = self.join_reads(stmt, state, test)
        return walk_loop(self, stmt, state, lambda s: s, test)


def analyze(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    sites: dict[ast.stmt, SiteView],
    relations: Relations,
    barriers: frozenset[ast.stmt] = frozenset(),
    methods: frozenset[str] = frozenset(),
    after: dict[ast.stmt, Anchor] | None = None,
    last: LastIterations | None = None,
) -> Analysis:
    """Where to join and relay each call of ``sites`` (keyed by the statement that binds it) in ``fn``; every
    call is joined before a statement of ``barriers`` (one that breaks the captured graph). ``after``:
    ``early.following(fn)``, when the caller has it; ``last``: the tests known false in a loop's last iteration."""
    after = after if after is not None else early.following(fn)
    ahead = early.Lookahead(sites=sites, relations=relations, barriers=barriers, methods=methods, after=after)
    fixed = fixed_tests(fn, {stmt: view.index for stmt, view in sites.items()})
    walk = Walk(sites=sites, relations=relations, barriers=barriers, methods=methods, ahead=ahead, fixed=fixed)
    walk.last = last or LastIterations()
    out = walk.block(fn.body, EMPTY)
    if out:
        walk.place(("end", fn, "body"), [join_step(p, out) for p in pending(out)])
    return walk.result
