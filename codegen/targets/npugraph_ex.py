"""npugraph_ex (and eager NPU code): ``torch.npu.Stream`` / ``torch.npu.Event`` / ``record_stream``, and core
limits through ``torch.npu.set_stream_limit``, the previous limit restored on exit as torchair does."""

from __future__ import annotations

import attrs

from codegen.plan import Context, EventRef, FunctionPlan, KeepAlive, LimitCores, ModulePlan, Step, SwitchStream
from codegen.targets.native import Native, helper, module_steps

__all__ = ["NpuGraphEx"]

_NATIVE = Native(device="torch.npu")

_CORE_LIMIT = '''@contextlib.contextmanager
def _core_limit(aicore: int, vector: int) -> Iterator[None]:
    """The current stream's ops use at most ``aicore`` cube and ``vector`` vector cores; the previous
    limit comes back on exit."""
    stream = torch.npu.current_stream()
    previous = torch.npu.get_stream_limit(stream)
    torch.npu.set_stream_limit(stream, aicore, vector)
    try:
        yield
    finally:
        torch.npu.set_stream_limit(stream, previous["cube_core_num"], previous["vector_core_num"])
'''


@attrs.frozen
class NpuGraphEx:
    name: str = "npugraph_ex"

    def context(self, context: Context) -> str | None:
        if isinstance(context, SwitchStream):
            return _NATIVE.switch(context)
        if isinstance(context, LimitCores):
            return f"_core_limit({context.aicore}, {context.vector})"
        raise TypeError(context)

    def statements(self, step: Step, values: tuple[str, ...]) -> list[str]:
        return _NATIVE.step(step, values, record_stream="{tensor}.record_stream({stream})")

    def define_event(self, event: EventRef) -> str | None:
        return _NATIVE.define_event(event)

    def imports(self, *, events: bool) -> list[str]:
        return ["import functools", "import torch"] if events else ["import torch"]

    def module_imports(self, plan: ModulePlan) -> list[str]:
        limits = bool(module_steps(plan, LimitCores))
        needed = limits or bool(_NATIVE.registries(plan)) or bool(plan.events) or bool(module_steps(plan, KeepAlive))
        lines = self.imports(events=any(e.source is None for e in plan.events)) if needed else []
        return ["import contextlib", *lines, "from collections.abc import Iterator"] if limits else lines

    def module_definitions(self, plan: ModulePlan) -> str:
        limits = helper(_CORE_LIMIT, "torch.npu") if module_steps(plan, LimitCores) else ""
        return _NATIVE.comment(_NATIVE.registries(plan) + limits)

    def module_comment(self) -> str | None:
        return None

    def entry_lines(self, plan: FunctionPlan) -> list[str]:
        return _NATIVE.entry_lines(plan)
