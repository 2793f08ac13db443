"""The caller's names whose type its annotations say: which class a parameter or a local certainly holds.

A call of an annotated name (``shared(x)`` with ``shared: SharedExpert``, ``experts.phase(x)``) resolves to that
class's stream function (:mod:`~codegen.lower.flow.callees`) only while the annotation is the only thing that binds
the name: a plain assignment, a loop or a ``with`` could bind it to anything else. ``X | None``, ``Optional[X]``
and ``"X"`` read as ``X``.
"""

from __future__ import annotations

import ast

from codegen.index.scan import dotted_name
from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import bound_names

__all__ = ["annotations_of", "strip_optional"]


def annotations_of(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """Parameters and locals annotated once with a type, and never bound otherwise (a plain assignment or a
    loop could rebind them to anything). One walk of ``fn`` finds both."""
    found = {a.arg: a.annotation for a in walked_of(fn.args, ast.arg) if a.annotation is not None}
    binders, stored = [], set()
    for node in walked_of(fn, (ast.AnnAssign, *_REBINDING, ast.Name)):  # the kinds asked below
        if isinstance(node, ast.AnnAssign):
            if isinstance(node.target, ast.Name):
                found[node.target.id] = node.annotation
        elif isinstance(node, _REBINDING):
            binders.append(node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stored.add(node.id)
    if stored.isdisjoint(found):  # what a binder binds is a stored name (walrus targets too)
        return found
    rebound = {name for node in binders for name in bound_names(node)}
    return {name: annotation for name, annotation in found.items() if name not in rebound}


_REBINDING = (ast.Assign, ast.AugAssign, ast.For, ast.With)


def strip_optional(node: ast.expr) -> ast.expr | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        return strip_optional(sides[0]) if len(sides) == 1 else None
    if isinstance(node, ast.Subscript) and dotted_name(node.value) in ("Optional", "typing.Optional"):
        return strip_optional(node.slice)
    return node
