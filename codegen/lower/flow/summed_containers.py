"""Whether a sum of the function's parameters may join two containers: then it holds both one's items and the other's.

``ys = xs + zs`` of two lists the function was given, or ``zs += xs``, makes a list holding the tensors of both:
a write through ``ys[0]`` writes ``xs[0]``, a side call given ``ys`` reads ``zs[-1]``. Nothing in the source says
a parameter is a list rather than a tensor (whose sum is new memory), so a sum whose every operand is a parameter
that may be a container, or a name the function binds to one (``binding_aliases.containers``), is read as joining
containers. A parameter annotated as a tensor or a scalar (``signature.annotation_tensorness``) is none, and so is
a local the function binds otherwise (``m = x * 2``, ``h = self.norm(x)``): the premise is that a list the
function sums comes in as a parameter or is built in the function. ``binding_aliases.py`` links such a sum to each
operand.
"""

from __future__ import annotations

import ast

from codegen.frontend.signature import Tensorness, annotation_tensorness
from codegen.lower.flow.value_views import operands

__all__ = ["maybe_containers", "summed"]


def maybe_containers(fn: ast.AST) -> frozenset[str]:
    """The parameters of ``fn`` that may be containers: unannotated, or annotated as neither a tensor nor a scalar."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return frozenset(a.arg for a in params if annotation_tensorness(a.annotation) is Tensorness.MAYBE)


def summed(value: ast.BinOp, maybe: frozenset[str]) -> bool:
    """``value`` is ``a + b`` (or a longer chain of ``+`` and ``*``) of names each in ``maybe``."""
    parts = operands(value) if isinstance(value.op, ast.Add) else []
    return bool(parts) and all(isinstance(p, ast.Name) and p.id in maybe for p in parts)
