"""Lower: the IR of one module, seen with the run index, -> a target-independent plan.

Each stream function (the *callee*) is planned here; the calls of stream functions (the *callers*)
are planned by :mod:`codegen.lower.flow.planner` on the dataflow of each caller.

The callee's protocol, the same whoever calls it: it forks from its caller's stream (the caller's
stream records ``<fn>.fork``, its own stream waits for it), runs, and records ``<fn>.join``. A caller
that joins by itself passes ``join=False``; any other caller (one outside the run, a lambda, a
``functools.partial``) leaves ``join=True``, and the callee then keeps its tensors alive for the
streams that read them and waits for its own stream before it returns: safe, with no overlap.
"""

from __future__ import annotations

import ast
from collections import Counter

import attrs

from codegen.check.diagnostics import Diagnostic
from codegen.frontend.ir import Guard, ModuleIR, StreamFunction
from codegen.frontend.positions import Positions
from codegen.index import scan
from codegen.index.index import RunIndex
from codegen.lower import naming
from codegen.lower.flow.callers import plan_callers
from codegen.lower.flow.tensors import local_returns, returns_made_tensor
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
    Wait,
)
from npudsl._rules import is_shared_event

__all__ = ["UserEvents", "lower", "lower_function"]


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
    own = {e.var for c in index.callees.values() if c.module == ir.module_name for e in (c.fork, c.join)}
    events = UserEvents(ir, taken=set(identifiers(tree)) | own)
    nodes = scan.functions_by_qualname(tree)
    functions = {
        fn.qualname: lower_function(fn, nodes[fn.qualname], ir.module_name, index, events, event_sync=event_sync)
        for fn in ir.functions
    }
    if not event_sync:
        functions = {q: _returned_records(p, nodes[q], tree) for q, p in functions.items()}
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
    """The plan of one decorated function: what it asks for in its own body, whoever calls it.

    The stream switch, fork, join and the lifetime of the tensors that cross belong to the call sites the run
    sees (:mod:`codegen.lower.flow`); a call the run cannot see runs the body on its caller's stream.
    """
    waits = tuple(
        Wait(event=attrs.evolve(events.ref(fn.owner, name), waiter=fn.qualname), when=Cond.of(_when(spec.when)))
        for spec in fn.waits
        for name in spec.names
    )
    records = tuple(
        Record(event=events.ref(fn.owner, name), when=Cond.of(_when(spec.when)))
        for spec in fn.records
        for name in spec.names
    )
    clone = (Clone(when=Cond.of(_when(fn.keep_output.when))),) if fn.keep_output and fn.keep_output.clone else ()
    return FunctionPlan(fn=fn, contexts=_contexts(fn), prologue=waits, epilogue=(*clone, *records))


def _returned_records(
    plan: FunctionPlan, node: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module
) -> FunctionPlan:
    """GE: a record at the end of a body that makes the one tensor it returns last can order on that tensor."""
    if not any(isinstance(s, Record) for s in plan.epilogue):
        return plan
    qualname = plan.fn.qualname
    receiver = node.args.args[0].arg if "." in qualname and node.args.args else None
    returns = local_returns(tree, qualname, receiver)
    if not returns_made_tensor(node, method="." in qualname, returns=returns):
        return plan
    epilogue = tuple(attrs.evolve(s, returned=True) if isinstance(s, Record) else s for s in plan.epilogue)
    return attrs.evolve(plan, epilogue=epilogue)


def _when(guard: Guard | None) -> str | None:
    return guard.dotted if guard is not None else None


def _contexts(fn: StreamFunction) -> tuple[Context, ...]:
    contexts: list[Context] = []
    if fn.core_limit is not None:
        limit = fn.core_limit
        guard = limit.when or (fn.stream.when if fn.stream is not None else None)  # off with the stream's guard
        contexts.append(LimitCores(aicore=limit.aicore, vector=limit.vector, when=Cond.of(_when(guard))))
    return tuple(contexts)
