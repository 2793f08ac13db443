"""Names for side-stream work: the function called on the stream that a ``stream_enter`` node opens.

Dynamo keeps, on every node, the module stack (``nn_module_stack``) and the
Python stack (``stack_trace``). The call site switches streams, so the work is
named by the first op inside the region, one level below the code that switched:
the module and user function it was called in (frames of npudsl, the standard
library and installed packages are skipped): ``SharedExpert.forward``,
``OverlapStep.all_reduce``. Without such an op, the code that switched names it.
"""

from __future__ import annotations

import os
import re
import sysconfig

import torch.fx

__all__ = ["region_label"]

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line \d+, in (?P<function>\w+)')
_NOT_USER = tuple(
    os.path.abspath(p) + os.sep
    for p in (
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # npudsl itself
        *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
    )
)


def _functions(node: torch.fx.Node) -> list[str]:
    frames = _FRAME.findall(node.meta.get("stack_trace") or "")
    return [function for file, function in frames if not os.path.abspath(file).startswith(_NOT_USER)]


def _owners(node: torch.fx.Node) -> list[str]:
    stack = node.meta.get("nn_module_stack") or {}
    return [
        owner.__name__ if isinstance(owner, type) else str(owner).rsplit(".", 1)[-1].strip("'>")
        for _, owner in stack.values()
    ]


def _below(outer: list[str], inner: list[str]) -> str | None:
    """The entry of ``inner`` one level below ``outer`` (the callee of the code that switched), else its last."""
    if len(inner) > len(outer):
        return inner[len(outer)]
    return outer[-1] if outer else None


def region_label(enter: torch.fx.Node, first: torch.fx.Node | None = None) -> str:
    """``Class.function`` of the work a region runs (what is known of it)."""
    owners, functions = _owners(enter), _functions(enter)
    if first is not None:
        parts = [_below(owners, _owners(first)), _below(functions, _functions(first))]
    else:
        parts = [owners[-1] if owners else None, functions[-1] if functions else None]
    return ".".join(p for p in parts if p) or f"stream {enter.args[0]}"
