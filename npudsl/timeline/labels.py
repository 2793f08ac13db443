"""Names for side-stream work: the function a ``stream_enter`` node was traced from.

Dynamo keeps, on every node, the module stack (``nn_module_stack``) and the
Python stack (``stack_trace``). The label is the innermost module's class and
the innermost user function (frames of npudsl, the standard library and installed
packages are skipped):
``SharedExpert.forward``, ``OverlapStep.all_reduce``.
"""

from __future__ import annotations

import os
import re
import sysconfig

import torch.fx

__all__ = ["region_label"]

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line \d+, in (?P<function>\w+)')
_NOT_USER = tuple(os.path.abspath(p) + os.sep for p in (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # npudsl itself
    *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
))


def _function(node: torch.fx.Node) -> str | None:
    frames = _FRAME.findall(node.meta.get("stack_trace") or "")
    user = [function for file, function in frames if not os.path.abspath(file).startswith(_NOT_USER)]
    return user[-1] if user else None


def _owner(node: torch.fx.Node) -> str | None:
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return None
    owner = list(stack.values())[-1][1]
    return owner.__name__ if isinstance(owner, type) else str(owner).rsplit(".", 1)[-1].strip("'>")


def region_label(node: torch.fx.Node) -> str:
    """``Class.function`` of the code that entered the stream (what is known of it)."""
    parts = [p for p in (_owner(node), _function(node)) if p]
    return ".".join(parts) or f"stream {node.args[0]}"
