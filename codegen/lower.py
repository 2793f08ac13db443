"""Lower: the IR of one module, seen with the run index, -> a target-independent plan."""

from __future__ import annotations

from collections import Counter

import attrs

from codegen import naming
from codegen.index import CallInfo, RunIndex
from codegen.ir import Guard, ModuleIR, StreamFunction
from codegen.plan import (
    Clone,
    Context,
    EventRef,
    FunctionPlan,
    JoinRule,
    KeepAlive,
    LimitCores,
    ModulePlan,
    Record,
    Step,
    SwitchStream,
    Wait,
)

__all__ = ["lower"]


def lower(ir: ModuleIR, index: RunIndex) -> ModulePlan:
    events = _UserEvents(ir)
    functions = {fn.qualname: _lower_function(fn, ir.module_name, index, events) for fn in ir.functions}
    joins = tuple(_join_rule(call, index) for calls in index.calls.values() for call in calls
                  if call.module == ir.module_name and index.joins_at_call_site(call.callee))
    return ModulePlan(functions=functions, joins=joins, events=_events_used(functions, joins))


@attrs.define(eq=False)
class _UserEvents:
    """User event names are scoped to their class; a variable is qualified only when two classes share a name."""

    ir: ModuleIR
    owners: Counter[str] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        pairs = {(fn.owner, name) for fn in self.ir.functions for spec in (*fn.waits, *fn.records)
                 for name in spec.names}
        self.owners = Counter(name for _, name in pairs)

    def ref(self, owner: str | None, name: str) -> EventRef:
        var = naming.event_var(name, owner, shared=self.owners[name] > 1)
        return EventRef(var=var, tag=naming.event_tag(self.ir.module_name, owner, name), user=True, name=name)


def _lower_function(fn: StreamFunction, module: str, index: RunIndex, events: _UserEvents) -> FunctionPlan:
    guard = fn.stream.when if fn.stream else None
    waits = tuple(Wait(event=events.ref(fn.owner, name), when=spec.when) for spec in fn.waits for name in spec.names)
    records = tuple(Record(event=events.ref(fn.owner, name), when=spec.when)
                    for spec in fn.records for name in spec.names)
    plan = FunctionPlan(fn=fn, contexts=_contexts(fn), prologue=waits,
                        epilogue=(*_keep_output(fn, module, index), *records))
    if not fn.auto_sync:
        return plan
    callee = index.callees[_key(module, fn)]
    self_join = None if index.joins_at_call_site(callee.key) else Wait(event=callee.join, when=guard)
    inputs = _kept_inputs(fn, guard)
    return attrs.evolve(plan, before=(Record(event=callee.fork, when=guard),),
                        prologue=(Wait(event=callee.fork, when=guard), *inputs, *plan.prologue),
                        epilogue=(*plan.epilogue, Record(event=callee.join, when=guard)), self_join=self_join)


def _kept_inputs(fn: StreamFunction, guard: Guard | None) -> tuple[Step, ...]:
    """The caller's stream may reuse an input's memory as soon as it stops using it, while this stream
    still reads it: record the required tensor inputs for this stream."""
    assert fn.stream is not None
    if not fn.required_inputs:
        return ()
    return (KeepAlive(stream=fn.stream.tag, when=guard, tensors=fn.required_inputs),)


def _key(module: str, fn: StreamFunction) -> str:
    return f"{module}:{fn.qualname}"


def _contexts(fn: StreamFunction) -> tuple[Context, ...]:
    contexts: list[Context] = []
    if fn.stream is not None:  # "default" too: a target that never switches to the main stream spells none
        contexts.append(SwitchStream(tag=fn.stream.tag, priority=fn.stream.priority, when=fn.stream.when))
    if fn.core_limit is not None:
        limit = fn.core_limit
        contexts.append(LimitCores(aicore=limit.aicore, vector=limit.vector, when=limit.when))
    return tuple(contexts)


def _keep_output(fn: StreamFunction, module: str, index: RunIndex) -> tuple[Step, ...]:
    keep = fn.keep_output
    if keep is None:
        return ()
    steps: list[Step] = [Clone(when=keep.when)] if keep.clone else []
    if fn.stream is not None and not fn.stream.is_default:
        when = keep.when or fn.stream.when
        consumers = index.consumer_streams(_key(module, fn))
        steps.extend(KeepAlive(stream=s, when=when) for s in consumers if s != fn.stream.tag)
    return tuple(steps)


def _join_rule(call: CallInfo, index: RunIndex) -> JoinRule:
    callee = index.callees[call.callee]
    event = attrs.evolve(callee.join, source=call.source)
    guard = _guard_at_call_site(callee.when, call)
    return JoinRule(caller=call.caller, attr=call.attr, on_self=call.on_self, wait=Wait(event=event, when=guard))


def _guard_at_call_site(when: str | None, call: CallInfo) -> Guard | None:
    """The callee's ``when`` as the caller spells it (``self.x`` of a submodule is ``self.<attr>.x``)."""
    if when is None:
        return None
    root, _, rest = when.partition(".")
    if root != "self":
        return Guard(dotted=when)
    is_method = call.callee.endswith(f".{call.attr}")
    receiver = "self" if is_method or not call.on_self else f"self.{call.attr}"
    return Guard(dotted=f"{receiver}.{rest}" if rest else receiver)


def _events_used(functions: dict[str, FunctionPlan], joins: tuple[JoinRule, ...]) -> tuple[EventRef, ...]:
    seen: dict[str, EventRef] = {}
    for plan in functions.values():
        for step in (*plan.before, *plan.prologue, *plan.epilogue):
            if isinstance(step, (Record, Wait)):
                seen.setdefault(step.event.var, step.event)
    for rule in joins:
        seen.setdefault(rule.wait.event.var, rule.wait.event)
    return tuple(seen.values())
