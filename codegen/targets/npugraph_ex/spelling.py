"""npugraph_ex (and eager NPU code): ``torch.npu.Stream`` / ``torch.npu.Event`` / ``record_stream``, and core
limits through ``torch.npu.npugraph_ex.scope.limit_core_num``, which works eagerly and marks compiled code."""

from __future__ import annotations

import attrs

from codegen.lower.plan import LimitCores
from codegen.targets.native import NativeSpelling

__all__ = ["NpuGraphExSpelling"]


@attrs.define(eq=False)
class NpuGraphExSpelling(NativeSpelling):
    device: str = "npu"

    def limit(self, context: LimitCores) -> str | None:
        return f"{self.torch}.npu.npugraph_ex.scope.limit_core_num({context.aicore}, {context.vector})"
