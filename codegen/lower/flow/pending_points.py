"""Which planned calls may still run at each statement of a caller: the planner's own analysis, read out.

``npudsl check`` asks which core limits may run at once (NPD302), and that is the planner's schedule: a call runs on
its stream from its fork to its join. The planner keeps its state only where a call is made
(:mod:`~codegen.lower.flow.analyze`), so this walks each caller once more from the planner's own round (the calls
that run apart, their views and relations: ``planner.apart_round``, read here and nowhere else) and records the state
every statement starts in, and the state once the joins placed before it are done. A call forks at its own
statement when the caller's plan records the event its stream waits for just before it; any other call (the next
call of a stream, a call that reuses an earlier fork record) is ordered only after some earlier point.

The walk reads the function in the order the transform issues it: a call the plan moves up into the block of the
call before it on its stream (``hoist.py``, ``CallerPlan.moves``) is walked there, so it is pending during the
main-stream statements it was moved above, as it runs. The plan is the transform's own (its ``sync="manual"`` calls
are statements no call moves across, as in ``callers.py``).
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.ir import ModuleIR
from codegen.frontend.positions import Positions
from codegen.index import scan
from codegen.lower.flow import early, planner
from codegen.lower.flow.analyze import Walk
from codegen.lower.flow.caller_context import event_context
from codegen.lower.flow.caller_groups import by_caller
from codegen.lower.flow.caller_module import CallerModule
from codegen.lower.flow.caller_sites import caller_sites, receiver_of
from codegen.lower.flow.callsites import find_calls
from codegen.lower.flow.fixed_tests import fixed_tests
from codegen.lower.flow.hoist_into import issued
from codegen.lower.flow.sites import Site
from codegen.lower.flow.stability import Stability, changed_objects
from codegen.lower.flow.state import EMPTY, State, joined, merge
from codegen.lower.flow.transfer import Join
from codegen.lower.hygiene import ModuleNames
from codegen.lower.plan import CallerPlan, Record, Wait

__all__ = ["CallerPoints", "issued_order", "pending_points"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen(kw_only=True)
class CallerPoints:
    """One caller's calls that run apart (``sites``, by index) and, per statement the walk reached, the state it
    starts in (``before``) and the state its own work runs in (``during``: after the joins placed before it, or
    ``before`` where its first operand is computed ahead of them)."""

    sites: tuple[Site, ...]
    before: dict[ast.stmt, State]
    during: dict[ast.stmt, State]
    self_forked: frozenset[ast.stmt]  # the sites' statements whose call waits for a record made just before it


def pending_points(ir: ModuleIR, tree: ast.Module, index: object, source: str) -> dict[str, CallerPoints]:
    """Every caller of the module with automatic calls that run apart, by qualname."""
    module = CallerModule(ir=ir, tree=tree, index=index, names=ModuleNames(tree), positions=Positions(source))
    nodes = scan.functions_by_qualname(tree)
    found: dict[str, CallerPoints] = {}
    for qualname, calls in by_caller(find_calls(ir.module_name, tree, index), index).items():  # type: ignore[arg-type]
        every = list(caller_sites(module, qualname, nodes[qualname], calls))
        sites = [s for s in every if s.callee.auto]  # type: ignore[attr-defined]
        if sites:
            numbered = [attrs.evolve(s, index=i) for i, s in enumerate(sites)]
            fixed = frozenset(s.stmt for s in every if not s.callee.auto)  # type: ignore[attr-defined]
            found[qualname] = _points(module, qualname, nodes[qualname], numbered, fixed)
    return found


def _points(
    module: CallerModule, qualname: str, written: _Function, sites: list[Site], fixed: frozenset[ast.stmt]
) -> CallerPoints:
    context = event_context(module, qualname, written, receiver_of(qualname, written), sites)
    plan = planner.plan_caller(written, sites, context, fixed)
    fn = issued_order(written, plan.moves)
    stability = Stability(fn, changed=changed_objects(sites))
    found = planner.apart_round(fn, sites, context, stability)  # the planner's own round, not a copy of it
    if found is None:
        return CallerPoints(sites=(), before={}, during={}, self_forked=frozenset())
    ahead = early.Lookahead(
        sites=found.views,
        relations=found.relations,
        barriers=context.barriers,
        methods=context.methods,
        after=early.following(fn),
    )
    walk = _Recording(
        sites=found.views,
        relations=found.relations,
        barriers=context.barriers,
        methods=context.methods,
        ahead=ahead,
        fixed=fixed_tests(fn, {stmt: view.index for stmt, view in found.views.items()}),
    )
    walk.block(fn.body, EMPTY)
    during = {stmt: _during(stmt, state, walk) for stmt, state in walk.seen.items()}
    forked = frozenset(s.stmt for s in found.sites if _forks_here(plan, s.stmt))
    return CallerPoints(sites=tuple(found.sites), before=dict(walk.seen), during=during, self_forked=forked)


def issued_order(fn: _Function, moves: dict[ast.stmt, ast.stmt]) -> _Function:
    """``fn`` with its body in the order the plan issues it: each moved call right after the call it follows, in
    the order the moves were decided (``hoist_into.issued``; ``codegen/rewrite/moved.py`` moves the lines the same
    way); ``fn`` itself where nothing moved. The statements are ``fn``'s own, so what is found of them holds for the
    source's."""
    return issued(fn, moves)[0]


def _during(stmt: ast.stmt, state: State, walk: _Recording) -> State:
    if stmt in walk.result.splits:
        return state
    steps = walk.result.at(("before", stmt, ""))
    return joined(state, (s.site for s in steps if isinstance(s, Join)))


def _forks_here(plan: CallerPlan, stmt: ast.stmt) -> bool:
    """The call of ``stmt`` waits for an event the caller records right before it."""
    wrap = plan.wraps.get(stmt)
    if wrap is None:
        return False
    recorded = {s.event.var for s in plan.steps.get(("before", stmt, ""), ()) if isinstance(s, Record)}
    return any(isinstance(s, Wait) and s.event.var in recorded for s in wrap.enter)


@attrs.define(eq=False)
class _Recording(Walk):
    """The planner's walk, keeping the state each statement starts in (merged over a loop's passes)."""

    seen: dict[ast.stmt, State] = attrs.Factory(dict)

    def statement(self, stmt: ast.stmt, state: State) -> State | None:
        merged = merge(self.seen.get(stmt), state)
        self.seen[stmt] = merged if merged is not None else state
        return super().statement(stmt, state)
