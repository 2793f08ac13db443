"""Where things happen in the user's code: a graph node's source line, and the caller's line now."""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import types

import torch
import torch._dynamo.utils
import torch.fx

import npudsl

__all__ = ["caller_location", "input_name", "location", "user_line"]

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
# L['self']._modules['lin']._parameters['weight'] -> self.lin.weight
_SOURCE_PARTS = (
    (re.compile(r"^[LG]\['(\w+)'\]"), r"\1"),
    (re.compile(r"\._(?:modules|parameters|buffers)\['(\w+)'\]"), r".\1"),
)
_LIBRARIES = tuple(os.path.dirname(os.path.abspath(f)) + os.sep for f in (torch.__file__, npudsl.__file__))
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def _is_user_file(path: str) -> bool:
    """Not torch, npudsl or the standard library, and a real file (not ``<eval_with_key>.3``)."""
    if path.startswith("<"):
        return False
    absolute = os.path.abspath(path)
    if absolute.startswith(_LIBRARIES):
        return False
    return "site-packages" in absolute.split(os.sep) or not absolute.startswith(_STDLIB)


def user_line(node: torch.fx.Node) -> tuple[str, int] | None:
    """The innermost user frame of the node's stack trace, as ``(path, line)``."""
    frames = _FRAME.findall(node.meta.get("stack_trace") or "")
    for path, line in reversed(frames):
        if _is_user_file(path):
            return path, int(line)
    return (frames[-1][0], int(frames[-1][1])) if frames else None


def input_name(node: torch.fx.Node) -> str:
    """A graph input as the user wrote it (``x``, ``self.lin.weight``), from dynamo's record of its source."""
    source = getattr(node.meta.get("grapharg"), "source", None)
    name = getattr(source, "name", None)
    if not isinstance(name, str):
        return str(node.target)
    for pattern, replacement in _SOURCE_PARTS:
        name = pattern.sub(replacement, name)
    return name


def location(node: torch.fx.Node) -> str:
    """The node's user source line as ``file:line``; graph inputs have no line and are named as such.

    Frames in torch, npudsl and the standard library are skipped.
    """
    if node.op in ("placeholder", "get_attr"):
        return f"graph input '{input_name(node)}'"
    found = user_line(node)
    return f"{found[0]}:{found[1]}" if found else f"node '{node.name}' (no source line recorded)"


def _is_user_frame(frame: types.FrameType) -> bool:
    """A frame of the user's own code, not of torch or npudsl, and not one running what dynamo compiled."""
    return _is_user_file(frame.f_code.co_filename) and frame.f_code not in torch._dynamo.utils.orig_code_map


def caller_location() -> str:
    """``file:line`` of the innermost user frame running now (who called into torch, npudsl or a compiled model)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and not _is_user_frame(frame):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "an unknown line"
