"""The targets of CONTRACT section 3, by name."""

from __future__ import annotations

from codegen.targets.aclgraph import AclGraph
from codegen.targets.base import Spelling, Target
from codegen.targets.cuda import Cuda
from codegen.targets.ge import Ge
from codegen.targets.npugraph_ex import NpuGraphEx
from codegen.targets.portable import Portable

__all__ = ["TARGETS", "Spelling", "Target", "get_target"]

TARGETS: dict[str, Target] = {
    "aclgraph": AclGraph(),
    "cuda": Cuda(),
    "ge": Ge(),
    "npugraph_ex": NpuGraphEx(),
    "portable": Portable(),
}


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; choose one of {', '.join(sorted(TARGETS))}") from None
