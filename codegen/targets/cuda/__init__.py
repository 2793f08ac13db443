"""The ``cuda`` target (CONTRACT section 3): native ``torch.cuda`` streams and events. ``spelling.py`` spells a
plan and warns that core limits are ignored (NPD590); ``backend.py`` is how ``npudsl.compile`` builds it; its
traits are here. CUDA graph capture needs every side stream joined back."""

from __future__ import annotations

from codegen.targets.base import Target
from codegen.targets.cuda import backend
from codegen.targets.cuda.spelling import CudaSpelling, diagnose

__all__ = ["TARGET"]

TARGET = Target(
    name="cuda",
    spelled_by=CudaSpelling,
    backend=backend.compile_args,
    event_sync=True,
    joins_every_stream=True,
    nests_stream_scopes=False,
    graph_options=False,
    diagnose=diagnose,
)
