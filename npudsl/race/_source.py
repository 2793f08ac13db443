"""Where a graph node came from in the user's code: ``file:line``."""

from __future__ import annotations

import os
import re
import sysconfig

import torch
import torch.fx

import npudsl

__all__ = ["location"]

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_LIBRARIES = tuple(os.path.dirname(os.path.abspath(f)) + os.sep for f in (torch.__file__, npudsl.__file__))
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def _is_user_file(path: str) -> bool:
    absolute = os.path.abspath(path)
    if absolute.startswith(_LIBRARIES):
        return False
    return "site-packages" in absolute.split(os.sep) or not absolute.startswith(_STDLIB)


def location(node: torch.fx.Node) -> str:
    """The innermost user frame of the node's stack trace as ``file:line``.

    Frames in torch, npudsl and the standard library are skipped; graph inputs
    have no line and are named as such.
    """
    if node.op in ("placeholder", "get_attr"):
        return f"graph input '{node.name}'"
    frames = _FRAME.findall(node.meta.get("stack_trace") or "")
    for path, line in reversed(frames):
        if _is_user_file(path):
            return f"{path}:{line}"
    if frames:
        return f"{frames[-1][0]}:{frames[-1][1]}"
    return f"node '{node.name}' (no source line recorded)"
