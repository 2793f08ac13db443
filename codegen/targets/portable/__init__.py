"""The ``portable`` target (CONTRACT section 3): npudsl's own traceable runtime ops, runnable on CPU, CUDA or
NPU. ``spelling.py`` spells a plan, ``backend.py`` is how ``npudsl.compile`` builds it (the race checker); its
traits are here."""

from __future__ import annotations

from codegen.targets.base import Target
from codegen.targets.portable import backend
from codegen.targets.portable.spelling import PortableSpelling

__all__ = ["TARGET"]

TARGET = Target(
    name="portable",
    spelled_by=PortableSpelling,
    backend=backend.compile_args,
    event_sync=True,
    joins_every_stream=False,
    nests_stream_scopes=False,
    graph_options=True,
)
