"""CUDA: ``torch.cuda.Stream`` / ``torch.cuda.Event`` / ``record_stream``; core limits are reported and ignored."""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from codegen.diagnostics import Diagnostic, Severity
from codegen.ir import ModuleIR
from codegen.plan import Context, EventRef, FunctionPlan, KeepAlive, LimitCores, ModulePlan, Step, SwitchStream
from codegen.targets.native import Native, helper, module_steps

__all__ = ["Cuda"]

_NATIVE = Native(device="torch.cuda")

_RECORD_STREAM = '''def _record_stream(tensor: torch.Tensor, stream: torch.cuda.Stream) -> None:
    """``tensor.record_stream(stream)``, except while a CUDA graph is captured eagerly, where it would keep
    the block alive until capture ends. Traced code always records."""
    if torch.compiler.is_compiling() or not torch.cuda.is_current_stream_capturing():
        tensor.record_stream(stream)
'''


@attrs.frozen
class Cuda:
    name: str = "cuda"

    def context(self, context: Context) -> str | None:
        if isinstance(context, SwitchStream):
            return _NATIVE.switch(context)
        if isinstance(context, LimitCores):
            return None  # no CUDA counterpart: ``diagnose`` warns
        raise TypeError(context)

    def statements(self, step: Step, values: tuple[str, ...]) -> list[str]:
        return _NATIVE.step(step, values, record_stream="_record_stream({tensor}, {stream})")

    def define_event(self, event: EventRef) -> str | None:
        return _NATIVE.define_event(event)

    def imports(self, *, events: bool) -> list[str]:
        return ["import functools", "import torch"] if events else ["import torch"]

    def module_imports(self, plan: ModulePlan) -> list[str]:
        needed = bool(_NATIVE.registries(plan)) or bool(plan.events) or bool(module_steps(plan, KeepAlive))
        return self.imports(events=any(e.source is None for e in plan.events)) if needed else []

    def module_definitions(self, plan: ModulePlan) -> str:
        keeps = helper(_RECORD_STREAM, "torch.cuda") if module_steps(plan, KeepAlive) else ""
        return _NATIVE.comment(_NATIVE.registries(plan) + keeps)

    def module_comment(self) -> str | None:
        return None

    def entry_lines(self, plan: FunctionPlan) -> list[str]:
        return _NATIVE.entry_lines(plan)

    def diagnose(self, ir: ModuleIR, plan: ModulePlan) -> Iterator[Diagnostic]:
        for fn in ir.functions:
            if fn.core_limit is not None:
                loc = fn.core_limit.loc
                yield Diagnostic(path=ir.path, line=loc.line, col=loc.col, code="NPD590",
                                 message="core_limit has no CUDA counterpart; ignored",
                                 hint="CUDA shares SMs between streams; the limit applies on NPU targets only",
                                 severity=Severity.WARNING)
