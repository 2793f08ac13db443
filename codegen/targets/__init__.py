"""The targets of CONTRACT section 3, by name."""

from __future__ import annotations

from codegen.targets.aclgraph import AclGraph
from codegen.targets.base import Target

__all__ = ["TARGETS", "Target", "get_target"]

TARGETS: dict[str, Target] = {"aclgraph": AclGraph()}


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; choose one of {', '.join(sorted(TARGETS))}") from None
