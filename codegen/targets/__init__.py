"""The targets of CONTRACT section 3, by name: the registry.

A target is a folder ``codegen/targets/<name>/`` whose ``__init__`` defines ``TARGET``, a :class:`Target` with
its spelling, its backend for ``npudsl.compile`` and the traits the checks read; :data:`NAMES` registers it.
What several targets share stays here: ``base`` (``Target``, ``Spelling``), ``helpers``, ``native`` (torch.cuda
and torch.npu), ``torchair`` (aclgraph and GE) and ``needs`` (backends' errors).
"""

from __future__ import annotations

import importlib

from codegen.targets.base import Spelling, Target

__all__ = ["NAMES", "TARGETS", "Spelling", "Target", "get_target"]

NAMES = (  # the registry: one line per target, its folder's name
    "aclgraph",
    "cuda",
    "ge",
    "npugraph_ex",
    "portable",
)

TARGETS: dict[str, Target] = {name: importlib.import_module(f"codegen.targets.{name}").TARGET for name in NAMES}


def get_target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; choose one of {', '.join(sorted(TARGETS))}") from None
