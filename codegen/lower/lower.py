"""Lower: the IR of one module, seen with the run index, -> a target-independent plan.

Each stream function (the *callee*) is planned here, one lowering per decorator of the registry
(``npudsl.schedule.DECORATORS``); the calls of stream functions (the *callers*) are planned by
:mod:`codegen.lower.flow.planner` on the dataflow of each caller, with the fork and join of
:mod:`npudsl.forkjoin` at each call site the run sees.

A call the run cannot see (a caller outside the run, a lambda, a ``functools.partial``) runs the body
on its caller's stream: safe, with no overlap."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable
from typing import Any

import attrs

from codegen.check.diagnostics import Diagnostic
from codegen.frontend.ir import CoreLimit, Events, Guard, KeepOutput, ModuleIR, Stream, StreamFunction
from codegen.frontend.positions import Positions
from codegen.index import scan
from codegen.index.index import RunIndex
from codegen.index.returns import run_returns
from codegen.lower import naming
from codegen.lower.flow.callers import plan_callers
from codegen.lower.flow.ge_returned import returned_element
from codegen.lower.flow.tensors import local_returns
from codegen.lower.hygiene import ModuleNames, identifiers
from codegen.lower.plan import (
    CallerPlan,
    Clone,
    Cond,
    Context,
    EventRef,
    FunctionPlan,
    LimitCores,
    ModulePlan,
    Record,
    Step,
    Wait,
)
from npudsl._rules import is_shared_event
from npudsl.forkjoin import ROLES
from npudsl.schedule import DECORATORS

__all__ = ["LOWERINGS", "UserEvents", "lower", "lower_function"]


@attrs.define(eq=False)
class UserEvents:
    """User event names are scoped to their class; a variable is qualified only when two classes share a name,
    and is fresh against every name of the module and every other event."""

    ir: ModuleIR
    taken: set[str]
    owners: Counter[str] = attrs.field(init=False)
    chosen: dict[tuple[str | None, str], str] = attrs.Factory(dict)

    def __attrs_post_init__(self) -> None:
        pairs = {
            (fn.owner, name) for fn in self.ir.functions for spec in (*fn.waits, *fn.records) for name in spec.names
        }
        self.owners = Counter(name for _, name in pairs)

    def waiters(self, owner: str | None, name: str) -> tuple[str, ...]:
        """The functions of the event's scope that wait for it, in source order."""
        return tuple(
            fn.qualname
            for fn in self.ir.functions
            if fn.owner == owner and any(name in spec.names for spec in fn.waits)
        )

    def ref(self, owner: str | None, name: str) -> EventRef:
        """A class's event (tag ``module.Class.name``), or a shared one (``ns:name``: the tag is the name, the
        same in every class and file; its waiters are not all known here)."""
        shared = is_shared_event(name)
        key = (None if shared else owner, name)
        if key not in self.chosen:
            wanted = naming.event_var(name.replace(":", "_"), owner, shared=not shared and self.owners[name] > 1)
            self.chosen[key] = naming.fresh_name(wanted, self.taken)
            self.taken.add(self.chosen[key])
        tag = name if shared else naming.event_tag(self.ir.module_name, owner, name)
        return EventRef(
            var=self.chosen[key],
            tag=tag,
            user=True,
            name=name,
            shared=shared,
            waiters=() if shared else self.waiters(owner, name),
        )


def lower(
    ir: ModuleIR, index: RunIndex, tree: ast.Module, positions: Positions, names: ModuleNames, *, event_sync: bool
) -> tuple[ModulePlan, tuple[Diagnostic, ...]]:
    """The plan of a module: its stream functions (callees) and the functions that call them (callers)."""
    own = {getattr(c, role).var for c in index.callees.values() if c.module == ir.module_name for role in ROLES}
    events = UserEvents(ir, taken=set(identifiers(tree)) | own)
    nodes = scan.functions_by_qualname(tree)
    functions = {
        fn.qualname: lower_function(fn, nodes[fn.qualname], ir.module_name, index, events, event_sync=event_sync)
        for fn in ir.functions
    }
    if not event_sync:
        functions = {q: _returned_records(p, nodes[q], tree, index, ir.module_name) for q, p in functions.items()}
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
            seen.setdefault(step.event.var, step.event)
    return tuple(attrs.evolve(e, scope=_scope(e, module)) for e in seen.values())


def _scope(event: EventRef, module: str) -> str:
    if event.shared:
        return ""
    return event.tag.removeprefix(f"{module}.")


def lower_function(
    fn: StreamFunction,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    module: str,
    index: RunIndex,
    events: UserEvents,
    *,
    event_sync: bool,
) -> FunctionPlan:
    """The plan of one decorated function: what it asks for in its own body, whoever calls it."""
    steps = _Steps(fn=fn, events=events)
    for decorator in DECORATORS:
        for spec in fn.said_by(decorator):
            LOWERINGS[decorator](steps, spec)
    epilogue = (*steps.clones, *steps.records)
    return FunctionPlan(fn=fn, contexts=tuple(steps.contexts), prologue=tuple(steps.prologue), epilogue=epilogue)


@attrs.define(eq=False)
class _Steps:
    """What the decorators of one function add to its body: contexts around it, steps before and after it."""

    fn: StreamFunction
    events: UserEvents
    contexts: list[Context] = attrs.Factory(list)
    prologue: list[Step] = attrs.Factory(list)
    clones: list[Step] = attrs.Factory(list)  # first after the body, so an event recorded after it covers them
    records: list[Step] = attrs.Factory(list)


def _waits(steps: _Steps, spec: Events) -> None:
    for name in spec.names:
        event = attrs.evolve(steps.events.ref(steps.fn.owner, name), waiter=steps.fn.qualname)
        steps.prologue.append(Wait(event=event, when=Cond.of(_when(spec.when))))


def _records(steps: _Steps, spec: Events) -> None:
    for name in spec.names:
        steps.records.append(Record(event=steps.events.ref(steps.fn.owner, name), when=Cond.of(_when(spec.when))))


def _core_limit(steps: _Steps, limit: CoreLimit) -> None:
    stream = steps.fn.stream
    guard = limit.when or (stream.when if stream is not None else None)  # off with the stream's guard
    steps.contexts.append(LimitCores(aicore=limit.aicore, vector=limit.vector, when=Cond.of(_when(guard))))


def _keep_output(steps: _Steps, keep: KeepOutput) -> None:
    if keep.clone:
        steps.clones.append(Clone(when=Cond.of(_when(keep.when))))


def _on_stream(steps: _Steps, stream: Stream) -> None:
    """Nothing in the body: the switch, fork, join and lifetimes belong to the call sites (``flow/``)."""


# Each decorator's lowering, by the registry's names (tests/dsl/test_decorator_registry.py).
LOWERINGS: dict[str, Callable[[_Steps, Any], None]] = {
    "on_stream": _on_stream,
    "after": _waits,
    "records": _records,
    "core_limit": _core_limit,
    "keep_output": _keep_output,
}


def _returned_records(
    plan: FunctionPlan, node: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module, index: RunIndex, module: str
) -> FunctionPlan:
    """GE: a record at the end of a body whose last work makes a tensor it returns can order on that tensor."""
    if not any(isinstance(s, Record) for s in plan.epilogue):
        return plan
    qualname = plan.fn.qualname
    receiver = node.args.args[0].arg if "." in qualname and node.args.args else None
    returns = local_returns(tree, qualname, receiver, run_returns(index, module, tree, plan.fn.owner, receiver))
    element = returned_element(node, method="." in qualname, returns=returns)
    if element is None:
        return plan
    epilogue = tuple(
        attrs.evolve(s, returned=True, element=element) if isinstance(s, Record) else s for s in plan.epilogue
    )
    return attrs.evolve(plan, epilogue=epilogue)


def _when(guard: Guard | None) -> str | None:
    return guard.dotted if guard is not None else None
