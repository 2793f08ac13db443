"""The ``aclgraph`` target (CONTRACT section 3): torchair reduce-overhead. ``spelling.py`` spells a plan with
stream switches, tagged events and tagged ``record_stream``; ``backend.py`` is how ``npudsl.compile`` builds it;
its traits are here. torchair joins side streams itself and nests its stream scopes."""

from __future__ import annotations

from codegen.targets.aclgraph import backend
from codegen.targets.aclgraph.spelling import AclGraphSpelling
from codegen.targets.base import Target

__all__ = ["TARGET"]

TARGET = Target(
    name="aclgraph",
    spelled_by=AclGraphSpelling,
    backend=backend.compile_args,
    event_sync=True,
    joins_every_stream=False,
    nests_stream_scopes=True,
    graph_options=True,
)
