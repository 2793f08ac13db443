"""Whether a sum of the function's parameters may join two containers: then it holds both one's items and the other's.

``ys = xs + zs`` of two lists the function was given, or ``zs += xs``, makes a list holding the tensors of both:
a write through ``ys[0]`` writes ``xs[0]``, a side call given ``ys`` reads ``zs[-1]``. Nothing in the source says
a parameter is a list rather than a tensor (whose sum is new memory), so a sum whose every operand is a parameter
that may be a container, or a name the function binds to one (``binding_aliases.containers``), is read as joining
containers. A parameter annotated as a tensor or a scalar (``signature.annotation_tensorness``) is none, and so is
a local the function binds otherwise (``m = x * 2``, ``h = self.norm(x)``): the premise is that a list the
function sums comes in as a parameter or is built in the function. ``binding_aliases.py`` links such a sum to each
operand.

A container is one object however many names hold it: after ``ys = xs``, ``ys += zs`` extends the list ``xs`` is
too (``list.__iadd__`` changes it in place), so what the augmented name takes in, each name it is a plain reference
copy of holds as well (``reference_copies``), and a copy of a parameter that may be a container may be one itself.
"""

from __future__ import annotations

import ast

from codegen.frontend.signature import Tensorness, annotation_tensorness
from codegen.index.walked import walked_of
from codegen.lower.flow.value_views import operands

__all__ = ["maybe_containers", "reference_copies", "summed"]


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


def reference_copies(fn: ast.AST) -> dict[str, frozenset[str]]:
    """{name: every name it may be the same object as, by plain reference copies} (``ys = xs``, ``zs = ys``: ``zs``
    may be ``ys`` and ``xs``), one step after another, whatever the order of the bindings."""
    direct: dict[str, set[str]] = {}
    for stmt in walked_of(fn, ast.Assign):
        if isinstance(stmt.value, ast.Name):
            for target in (t for t in stmt.targets if isinstance(t, ast.Name)):
                direct.setdefault(target.id, set()).add(stmt.value.id)
    return {name: _reached(name, direct) for name in direct}


def _reached(name: str, direct: dict[str, set[str]]) -> frozenset[str]:
    seen: set[str] = set()
    left = list(direct.get(name, ()))
    while left:
        copied = left.pop()
        if copied not in seen and copied != name:
            seen.add(copied)
            left.extend(direct.get(copied, ()))
    return frozenset(seen)
