"""The sync analysis of one caller: where each planned stream call is joined, on exactly the paths it forked.

A structured walk over the function's statements carries the pending calls (:mod:`codegen.lower.flow.state`)
through ``if``/``elif``/``else``, ``match``, loops (to a fixed point, so a result carried into the next
iteration is joined before its use there), ``try``/``except``/``else``/``finally``, ``with``, early
``return``, ``break`` and ``continue``. Steps are placed *before* a statement, or at the *end* of a
block (a loop body whose ``while`` test reads a result; the end of the function).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.lower.flow import early
from codegen.lower.flow.exprs import bound_names, data_reads, loaded_names
from codegen.lower.flow.state import EMPTY, Pending, State, joined, merge, pending, renamed
from codegen.lower.flow.transfer import Join, Relations, SiteView, Step, join_step, transfer

__all__ = ["Analysis", "Anchor", "analyze"]

Anchor = tuple[str, ast.AST, str]  # ("before", stmt, "") or ("end", node, field)
_LOOP_LIMIT = 20


@attrs.define(eq=False)
class Analysis:
    steps: dict[Anchor, list[Step]] = attrs.Factory(dict)
    states: dict[ast.stmt, State] = attrs.Factory(dict)  # the state each planned call's statement starts in
    splits: dict[ast.stmt, ast.expr] = attrs.Factory(dict)  # statements whose first operand runs before the join

    def at(self, anchor: Anchor) -> list[Step]:
        return self.steps.get(anchor, [])


@attrs.define(eq=False)
class _Loop:
    breaks: list[State] = attrs.Factory(list)
    continues: list[tuple[ast.stmt, State]] = attrs.Factory(list)


@attrs.define(eq=False)
class _Walk:
    sites: dict[ast.stmt, SiteView]
    relations: Relations
    barriers: frozenset[ast.stmt] = frozenset()
    methods: frozenset[str] = frozenset()  # the caller's own methods: calling one may read its object's state
    result: Analysis = attrs.Factory(Analysis)
    recording: bool = True
    loops: list[_Loop] = attrs.Factory(list)
    raises: list[list[State]] = attrs.Factory(list)
    ahead: early.Lookahead = attrs.field(kw_only=True)  # what the statements after a point do first

    def place(self, anchor: Anchor, steps: list[Step]) -> None:
        """Record ``steps`` at ``anchor``; a step placed twice there (two analyses of one block) is *may*
        if either placement was."""
        if not (self.recording and steps):
            return
        known = self.result.steps.setdefault(anchor, [])
        for step in steps:
            same = next((i for i, k in enumerate(known) if attrs.evolve(k, may=step.may) == step), None)
            if same is None:
                known.append(step)
                continue
            merged = attrs.evolve(known[same], may=known[same].may or step.may)
            if isinstance(step, Join):
                merged = attrs.evolve(merged, names=known[same].names | step.names)  # type: ignore[union-attr]
            known[same] = merged

    def join_reads(self, stmt: ast.AST, state: State, reads: set[str], anchor: Anchor | None = None) -> State:
        """Join, before ``anchor`` (default: before ``stmt``), every call whose result ``reads`` touches."""
        steps: list[Step] = [join_step(p, state) for p in pending(state) if p.names & reads]
        self.place(anchor or ("before", stmt, ""), steps)
        return joined(state, (s.site for s in steps))

    def early_joins(self, stmt: ast.stmt, found: list[Pending], state: State) -> State:
        """Join ``found`` before ``stmt`` (the lowering waits once per event, :mod:`codegen.lower.flow.wraps`)."""
        self.place(("before", stmt, ""), [join_step(p, state) for p in found])
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
        return handler(stmt, state) if handler else self.simple(stmt, state)

    def simple(self, stmt: ast.stmt, state: State) -> State | None:
        if self.recording and stmt in self.sites:
            self.result.states[stmt] = state
        if stmt in self.barriers:  # the graph breaks here: fork and join must stay in one graph
            steps: list[Step] = [join_step(p, state) for p in pending(state)]
            self.place(("before", stmt, ""), steps)
            state = joined(state, (s.site for s in steps))
        view = self.sites.get(stmt)
        if view is not None:
            state = self.early_joins(stmt, self.ahead.read_again(stmt, view, state), state)
        steps, after = transfer(stmt, state, view, self.relations, self.methods)
        self.place(("before", stmt, ""), steps)
        joins = view is None and stmt not in self.barriers and any(isinstance(s, Join) for s in steps)
        first = self.ahead.first_operand(stmt, state) if joins else None
        if self.recording and first is not None:
            self.result.splits[stmt] = first
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return None
        return after

    def _Break(self, stmt: ast.Break, state: State) -> None:
        self.loops[-1].breaks.append(state)

    def _Continue(self, stmt: ast.Continue, state: State) -> None:
        self.loops[-1].continues.append((stmt, state))

    def _If(self, stmt: ast.If, state: State) -> State | None:
        """An ``if`` with its ``elif`` chain: every test of the chain is joined before the first ``if`` (no
        plain statement runs between the tests, so the pending calls are the same at each)."""
        chain = [stmt]
        while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
            chain.append(chain[-1].orelse[0])
        state = self.join_reads(stmt, state, set().union(*(data_reads(link.test) for link in chain)))
        state = self.early_joins(stmt, self.ahead.due(stmt, state), state)
        outs = [self.block(link.body, state) for link in chain]
        return merge(*outs, self.block(chain[-1].orelse, state))

    def _With(self, stmt: ast.With | ast.AsyncWith, state: State) -> State | None:
        reads = set().union(*(data_reads(item.context_expr) for item in stmt.items))
        state = self._bind(self.join_reads(stmt, state, reads), stmt.items)
        return self.block(stmt.body, state)

    _AsyncWith = _With

    def _FunctionDef(self, stmt: ast.AST, state: State) -> State:
        """A nested definition may read any name it mentions, whenever it runs: join them now."""
        state = self.join_reads(stmt, state, loaded_names(stmt))
        return self._bind(state, [stmt])

    _AsyncFunctionDef = _ClassDef = _FunctionDef

    def _Match(self, stmt: ast.Match, state: State) -> State | None:
        reads = data_reads(stmt.subject).union(*(data_reads(c.guard) for c in stmt.cases if c.guard))
        state = self.join_reads(stmt, state, reads)
        outs = [self.block(case.body, self._bind(state, [case.pattern])) for case in stmt.cases]
        exhaustive = (
            stmt.cases
            and isinstance(stmt.cases[-1].pattern, ast.MatchAs)
            and stmt.cases[-1].pattern.pattern is None
            and stmt.cases[-1].guard is None
        )
        return merge(*outs, None if exhaustive else state)

    def _Try(self, stmt: ast.Try, state: State) -> State | None:
        self.raises.append([state])
        body = self.block(stmt.body, state)
        raised = merge(*self.raises.pop(), body)
        done = self.block(stmt.orelse, body)
        handled = [self.block(h.body, self._bind(raised, [h])) if raised is not None else None for h in stmt.handlers]
        out = merge(done, *handled)
        if not stmt.finalbody:
            return out
        if out is None or _returns(stmt):  # a ``return`` runs the ``finally`` after its joins: join what it forks
            end = self.block(stmt.finalbody, EMPTY)
            self.place(("end", stmt, "finalbody"), [join_step(p, end) for p in pending(end or ())])
        return self.block(stmt.finalbody, out) if out is not None else None

    _TryStar = _Try

    def _For(self, stmt: ast.For | ast.AsyncFor, state: State) -> State | None:
        state = self.join_reads(stmt, state, data_reads(stmt.iter))
        return self.loop(stmt, state, lambda s: self._bind(s, [stmt.target]), None)

    _AsyncFor = _For

    def _While(self, stmt: ast.While, state: State) -> State | None:
        test = data_reads(stmt.test)
        state = self.join_reads(stmt, state, test)
        return self.loop(stmt, state, lambda s: s, test)

    def loop(
        self,
        stmt: ast.For | ast.AsyncFor | ast.While,
        state: State,
        enter: Callable[[State], State],
        test: set[str] | None,
    ) -> State | None:
        """Iterate the body to a fixed point (nothing recorded), then once more recording its steps."""
        recording, self.recording = self.recording, False
        head = state
        for _ in range(_LOOP_LIMIT):
            frame = self._iterate(stmt, head, enter, test)
            new_head = merge(state, frame[0], *(s for _, s in frame[1].continues))
            if new_head == head:
                break
            head = new_head if new_head is not None else state
        self.recording = recording
        out, loop = self._iterate(stmt, head, enter, test)
        exits = self.block(stmt.orelse, head) if stmt.orelse else head
        return merge(exits, *loop.breaks)

    def _iterate(
        self, stmt: ast.AST, head: State, enter: Callable[[State], State], test: set[str] | None
    ) -> tuple[State | None, _Loop]:
        frame = _Loop()
        self.loops.append(frame)
        try:
            out = self.block(stmt.body, enter(head))  # type: ignore[attr-defined]
        finally:
            self.loops.pop()
        if test is not None:  # a ``while`` test reads at the head: join on every edge back to it
            out = self.join_reads(stmt, out, test, ("end", stmt, "body")) if out is not None else None
            frame.continues = [(c, self.join_reads(c, s, test)) for c, s in frame.continues]
        return out, frame

    @staticmethod
    def _bind(state: State, nodes: list[ast.AST]) -> State:
        written = set().union(*(_targets(n) for n in nodes))
        return renamed(state, {p.site: p.names - written for p in state})


def _targets(node: ast.AST) -> set[str]:
    if isinstance(node, ast.withitem):
        return bound_names(node.optional_vars) if node.optional_vars is not None else set()
    if isinstance(node, ast.ExceptHandler):
        return {node.name} if node.name else set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.pattern):
        return {n for sub in ast.walk(node) for n in (getattr(sub, "name", None),) if isinstance(n, str)}
    return bound_names(node)


def _returns(stmt: ast.Try) -> bool:
    parts = [*stmt.body, *stmt.orelse, *(n for h in stmt.handlers for n in h.body)]
    return any(isinstance(n, ast.Return) for part in parts for n in _own_statements(part))


def _own_statements(node: ast.AST) -> list[ast.AST]:
    """``node`` and the statements nested in its blocks, not in nested functions or classes."""
    found: list[ast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        if not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(
                c for c in ast.iter_child_nodes(current) if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))
            )
    return found


def analyze(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    sites: dict[ast.stmt, SiteView],
    relations: Relations,
    barriers: frozenset[ast.stmt] = frozenset(),
    methods: frozenset[str] = frozenset(),
    after: dict[ast.stmt, Anchor] | None = None,
) -> Analysis:
    """Where to join and relay each call of ``sites`` (keyed by the statement that binds it) in ``fn``; every
    call is joined before a statement of ``barriers`` (one that breaks the captured graph). ``after``:
    ``early.following(fn)``, when the caller has it."""
    after = after if after is not None else early.following(fn)
    ahead = early.Lookahead(sites=sites, relations=relations, barriers=barriers, methods=methods, after=after)
    walk = _Walk(sites=sites, relations=relations, barriers=barriers, methods=methods, ahead=ahead)
    out = walk.block(fn.body, EMPTY)
    if out:
        walk.place(("end", fn, "body"), [join_step(p, out) for p in pending(out)])
    return walk.result
