"""torchair GE (max-autotune): ``npu_stream_switch``, ``limit_core_num`` and ``npu_wait_tensor``.

GE orders a graph by its data dependencies and frees memory itself, so the automatic fork and join
and ``keep_output`` need no call. Explicit events become control edges between tensors: ``@records("e")``
keeps the body's returned tensor on ``self._event_e``, and ``@after("e")`` passes each tensor input of
the waiting body through ``npu_wait_tensor(x, self._event_e)``. What cannot be said that way is an error.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from codegen.ir import ModuleIR, StreamFunction
from codegen.plan import (
    Clone,
    Context,
    EventRef,
    FunctionPlan,
    KeepAlive,
    LimitCores,
    ModulePlan,
    Record,
    Step,
    SwitchStream,
    Wait,
)
from codegen.targets.base import clone_statement, quote
from codegen.targets.ge_checks import problems

__all__ = ["Ge", "holder"]

_WAIT = "torchair.scope.npu_wait_tensor"


def holder(event: EventRef) -> str:
    """The attribute that keeps the tensor standing for a user event."""
    return f"self._event_{event.name}"


@attrs.frozen
class Ge:
    name: str = "ge"
    fn: StreamFunction | None = None  # the function being spelled (set by ``for_function``)

    def for_function(self, plan: FunctionPlan) -> Ge:
        return attrs.evolve(self, fn=plan.fn)

    def context(self, context: Context) -> str | None:
        if isinstance(context, SwitchStream):
            if context.tag == "default":
                return None
            return f"torchair.scope.npu_stream_switch({quote(context.tag)}, {context.priority})"
        if isinstance(context, LimitCores):
            return f"torchair.scope.limit_core_num({context.aicore}, {context.vector})"
        raise TypeError(context)

    def statements(self, step: Step, values: tuple[str, ...]) -> list[str]:
        if isinstance(step, (Record, Wait)) and not step.event.user:
            return []  # the automatic fork and join: GE follows the data
        if isinstance(step, Record):
            return [f"{holder(step.event)} = {_joined(values)}"] if values else []
        if isinstance(step, Wait):
            inputs = self.fn.inputs if self.fn else ()
            return [f"{x} = {_WAIT}({x}, {holder(step.event)})" for x in inputs]
        if isinstance(step, KeepAlive):
            return []  # GE plans the memory of the whole graph; nothing is reused early
        if isinstance(step, Clone):
            return clone_statement(step, values)
        raise TypeError(step)

    def wants_values(self, step: Step) -> bool:
        return isinstance(step, Record) and step.event.user

    def define_event(self, event: EventRef) -> str | None:
        return None

    def imports(self, *, events: bool) -> list[str]:
        return ["import torchair"]

    def module_imports(self, plan: ModulePlan) -> list[str]:
        spelled = any(self.context(c) for p in plan.functions.values() for c in p.contexts)
        return self.imports(events=False) if spelled or any(e.user for e in plan.events) else []

    def module_comment(self) -> str | None:
        return None

    def diagnose(self, ir: ModuleIR, plan: ModulePlan) -> Iterator:  # type: ignore[type-arg]
        return problems(ir)


def _joined(values: tuple[str, ...]) -> str:
    """One tensor whose producer runs after every returned tensor's producer."""
    joined = values[0]
    for value in values[1:]:
        joined = f"{_WAIT}({joined}, {value})"
    return joined
