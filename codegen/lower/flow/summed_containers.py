"""Whether ``a + b`` of two names may join two containers: then the sum holds both one's items and the other's.

``ys = xs + zs`` of two lists the function was given, or ``ys += xs``, makes a list holding the tensors of both:
a write through ``ys[0]`` writes ``xs[0]``, a side call given ``ys`` reads ``zs[-1]``. Nothing in the source says
a parameter is a list rather than a tensor (whose sum is new memory), so a sum of names is read as one that may
join containers unless a name is certainly no container: a parameter annotated as a tensor or a scalar
(``signature.annotation_tensorness``). ``binding_aliases.py`` links such a sum to both names.
"""

from __future__ import annotations

import ast

from codegen.frontend.signature import Tensorness, annotation_tensorness
from codegen.lower.flow.value_views import operands

__all__ = ["not_containers", "summed"]


def not_containers(fn: ast.AST) -> frozenset[str]:
    """The parameters of ``fn`` annotated as a tensor or a scalar: certainly no container."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return frozenset(a.arg for a in params if annotation_tensorness(a.annotation) is not Tensorness.MAYBE)


def summed(value: ast.BinOp, plain: frozenset[str]) -> bool:
    """``value`` is ``a + b`` (or a longer chain of ``+``) of names none of which is in ``plain``."""
    parts = operands(value) if isinstance(value.op, ast.Add) else []
    return bool(parts) and all(isinstance(p, ast.Name) and p.id not in plain for p in parts)
