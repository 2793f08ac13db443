"""CUDA: ``torch.cuda.Stream`` / ``torch.cuda.Event`` / ``record_stream``; core limits are reported and ignored.

``record_stream`` is called under CUDA graph capture too: the caching allocator then keeps a recorded
block out of reuse until capture ends, which grows the graph's pool by the tensors that cross streams
but never lets another stream's work reuse memory a side stream may still read or write.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.frontend.ir import ModuleIR
from codegen.lower.plan import LimitCores, ModulePlan
from codegen.targets.native import NativeSpelling
from npudsl import codes

__all__ = ["CudaSpelling", "diagnose"]


@attrs.define(eq=False)
class CudaSpelling(NativeSpelling):
    device: str = "cuda"

    def limit(self, context: LimitCores) -> str | None:
        return None  # no CUDA counterpart: ``diagnose`` warns


def diagnose(ir: ModuleIR, plan: ModulePlan) -> Iterator[Diagnostic]:
    for fn in ir.functions:
        if fn.core_limit is not None:
            loc = fn.core_limit.loc
            yield Diagnostic(
                path=ir.path,
                line=loc.line,
                col=loc.col,
                code=codes.CUDA_CORE_LIMIT,
                message="core_limit has no CUDA counterpart; ignored",
                hint="CUDA shares SMs between streams; the limit applies on NPU targets only",
                severity=Severity.WARNING,
            )
