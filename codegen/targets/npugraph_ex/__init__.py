"""The ``npugraph_ex`` target (CONTRACT section 3): native ``torch.npu`` streams and events, also the eager NPU
code. ``spelling.py`` spells a plan, ``backend.py`` is how ``npudsl.compile`` builds it; its traits are here. Its
graph capture needs every side stream joined back, as CUDA's does."""

from __future__ import annotations

from codegen.targets.base import Target
from codegen.targets.npugraph_ex import backend
from codegen.targets.npugraph_ex.spelling import NpuGraphExSpelling

__all__ = ["TARGET"]

TARGET = Target(
    name="npugraph_ex",
    spelled_by=NpuGraphExSpelling,
    backend=backend.compile_args,
    event_sync=True,
    joins_every_stream=True,
    nests_stream_scopes=False,
    graph_options=True,
)
