"""npugraph_ex (and eager NPU code): ``torch.npu.Stream`` / ``torch.npu.Event`` / ``record_stream``, and core
limits through ``torch.npu.npugraph_ex.scope.limit_core_num``, which works eagerly and marks compiled code."""

from __future__ import annotations

import attrs

from codegen.lower.hygiene import ModuleNames
from codegen.lower.plan import LimitCores
from codegen.targets.base import Spelling
from codegen.targets.native import NativeSpelling

__all__ = ["NpuGraphEx"]


@attrs.define(eq=False)
class _Spelling(NativeSpelling):
    device: str = "npu"

    def limit(self, context: LimitCores) -> str | None:
        return f"{self.torch}.npu.npugraph_ex.scope.limit_core_num({context.aicore}, {context.vector})"


@attrs.frozen
class NpuGraphEx:
    name: str = "npugraph_ex"
    event_sync: bool = True

    def spelling(self, names: ModuleNames) -> Spelling:
        return _Spelling(names=names)
