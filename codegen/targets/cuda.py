"""CUDA: ``torch.cuda.Stream`` / ``torch.cuda.Event`` / ``record_stream``; core limits are reported and ignored."""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from codegen.diagnostics import Diagnostic, Severity
from codegen.hygiene import ModuleNames
from codegen.ir import ModuleIR
from codegen.plan import LimitCores, ModulePlan
from codegen.targets.base import Spelling
from codegen.targets.helpers import RECORD
from codegen.targets.native import RECORD_DOC, NativeSpelling

__all__ = ["Cuda"]

_RECORD_DOC = (f"{RECORD_DOC}\n\n    Skipped while a CUDA graph is captured eagerly: the block would stay in use until "
               "capture ends.\n    ")


@attrs.define(eq=False)
class _Spelling(NativeSpelling):
    device: str = "cuda"

    def limit(self, context: LimitCores) -> str | None:
        return None  # no CUDA counterpart: ``diagnose`` warns

    def record_helper(self) -> str:
        torch = self.torch
        call = (f"if {torch}.compiler.is_compiling() or not {torch}.cuda.is_current_stream_capturing():\n"
                "            value.record_stream(stream)")
        source = RECORD.replace("RECORD_DOC", _RECORD_DOC).replace("RECORD_CALL", call).replace("TORCH", torch)
        return self.helper("_record_stream", source)


@attrs.frozen
class Cuda:
    name: str = "cuda"
    event_sync: bool = True

    def spelling(self, names: ModuleNames) -> Spelling:
        return _Spelling(names=names)

    def diagnose(self, ir: ModuleIR, plan: ModulePlan) -> Iterator[Diagnostic]:
        for fn in ir.functions:
            if fn.core_limit is not None:
                loc = fn.core_limit.loc
                yield Diagnostic(path=ir.path, line=loc.line, col=loc.col, code="NPD590",
                                 message="core_limit has no CUDA counterpart; ignored",
                                 hint="CUDA shares SMs between streams; the limit applies on NPU targets only",
                                 severity=Severity.WARNING)
