"""The ``ge`` target (CONTRACT section 3): torchair max-autotune (GE). ``spelling.py`` orders streams through
tensors (control edges and tokens) and warns of shared events (NPD591); ``backend.py`` is how ``npudsl.compile``
builds it; its traits are here. torchair joins side streams itself and nests its stream scopes."""

from __future__ import annotations

from codegen.targets.base import Target
from codegen.targets.ge import backend
from codegen.targets.ge.spelling import GeSpelling, diagnose

__all__ = ["TARGET"]

TARGET = Target(
    name="ge",
    spelled_by=GeSpelling,
    backend=backend.compile_args,
    event_sync=False,
    joins_every_stream=False,
    nests_stream_scopes=True,
    graph_options=False,
    diagnose=diagnose,
)
