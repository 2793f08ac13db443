"""Lower: the IR of one module, seen with the run index, -> a target-independent plan.

Each stream function (the *callee*) is planned here, one lowering per decorator of the registry
(``npudsl.schedule.DECORATORS``); the calls of stream functions (the *callers*) are planned by
:mod:`codegen.lower.flow.planner` on the dataflow of each caller, with the fork and join of
:mod:`npudsl.forkjoin` at each call site the run sees.

A call the run cannot see (a caller outside the run, a lambda, a ``functools.partial``) runs the body
on its caller's stream: safe, with no overlap. A function's own steps are ``lowerings``; its user
events' variables and tags ``user_events``.
"""

from __future__ import annotations

import ast

import attrs

from codegen.check.diagnostics import Diagnostic
from codegen.frontend.ir import ModuleIR
from codegen.frontend.positions import Positions
from codegen.index import scan
from codegen.index.index import RunIndex
from codegen.lower.flow.callers import plan_callers
from codegen.lower.hygiene import ModuleNames, identifiers
from codegen.lower.lowerings import LOWERINGS, lower_function
from codegen.lower.plan import CallerPlan, EventRef, FunctionPlan, ModulePlan, Record, Wait
from codegen.lower.returned_tokens import listed_events, returned_tokens, with_returned
from codegen.lower.user_events import UserEvents
from npudsl.forkjoin import ROLES

__all__ = ["LOWERINGS", "UserEvents", "lower", "lower_function"]  # the last two re-exported


def lower(
    ir: ModuleIR, index: RunIndex, tree: ast.Module, positions: Positions, names: ModuleNames, *, event_sync: bool
) -> tuple[ModulePlan, tuple[Diagnostic, ...]]:
    """The plan of a module: its stream functions (callees) and the functions that call them (callers)."""
    own = {getattr(c, role).var for c in index.callees.values() if c.module == ir.module_name for role in ROLES}
    nodes = scan.functions_by_qualname(tree)
    tokens = {} if event_sync else returned_tokens(ir, nodes, tree, index)
    events = UserEvents(ir, taken=set(identifiers(tree)) | own, listed=listed_events(ir, tokens))
    functions = {
        fn.qualname: lower_function(fn, nodes[fn.qualname], ir.module_name, index, events, event_sync=event_sync)
        for fn in ir.functions
    }
    functions = {q: with_returned(p, tokens.get(q)) for q, p in functions.items()}
    callers = plan_callers(ir, tree, index, names, positions, event_sync=event_sync)
    events_used = _events_used(functions, callers.plans, ir.module_name)
    plan = ModulePlan(functions=functions, callers=callers.plans, events=events_used, imports=callers.imports)
    return plan, callers.diagnostics


def _events_used(
    functions: dict[str, FunctionPlan], callers: dict[str, CallerPlan], module: str
) -> tuple[EventRef, ...]:
    """Every event the module's steps name, in first-use order (one per variable), each with its tag's part
    after ``module`` (``scope``: the whole tag for another module's event), for tags made at import."""
    steps = [s for p in functions.values() for s in (*p.prologue, *p.epilogue)]
    for caller in callers.values():
        steps += [s for wrap in caller.wraps.values() for s in (*wrap.enter, *wrap.leave)]
        steps += [s for found in caller.steps.values() for s in found]
    seen: dict[str, EventRef] = {}
    for step in steps:
        if isinstance(step, (Record, Wait)):
            for event in step.event.pick or (step.event,):  # a picked event: each it picks from
                seen.setdefault(event.var, event)
    return tuple(attrs.evolve(e, scope=_scope(e, module)) for e in seen.values())


def _scope(event: EventRef, module: str) -> str:
    if event.shared:
        return ""
    return event.tag.removeprefix(f"{module}.")
