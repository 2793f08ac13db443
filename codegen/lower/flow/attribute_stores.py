"""The values a method stores on its object's attributes, read where the value is spelled.

``self.rope_dim = shape["rope_dim"]`` stores ``shape["rope_dim"]``; ``self.a, self.b = x, y`` pairs each target
with its value; an unpacking of anything else, an augmented store, ``del self.a`` (stores None) and ``setattr``
on the object (any attribute, value unknown) are reported too, so a reader deciding what an attribute can hold
(``scalar_attributes.py``) sees every store.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index import scan
from codegen.index.walked import walked_of

__all__ = ["attribute_stores", "paired_targets"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def attribute_stores(fn: _Function, receiver: str) -> Iterator[tuple[str, ast.expr | None]]:
    """(attribute, the value stored, None where not read) for each store to ``receiver.attr`` in ``fn``; ``("*",
    None)`` for a ``setattr`` on the object."""
    paired: dict[int, ast.expr | None] = {}
    for stmt in walked_of(fn, ast.stmt):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                paired.update((id(t), v) for t, v in paired_targets(target, stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            paired[id(stmt.target)] = stmt.value
    for node in walked_of(fn, ast.Attribute):
        if not isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) and node.value.id == receiver:
            yield node.attr, (ast.Constant(None) if isinstance(node.ctx, ast.Del) else paired.get(id(node)))
    for call in walked_of(fn, ast.Call):
        if scan.dotted_name(call.func) == "setattr" and call.args and _is(call.args[0], receiver):
            yield "*", None


def _is(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def paired_targets(target: ast.expr, value: ast.expr | None) -> list[tuple[ast.expr, ast.expr | None]]:
    """Each plain target of an assignment with the value it gets (``a, b = x, y`` pairs them; an unpacked call:
    unknown, None)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [None] * len(target.elts)
        if len(values) != len(target.elts):
            values = [None] * len(target.elts)
        return [p for t, v in zip(target.elts, values, strict=True) for p in paired_targets(t, v)]
    return [(target, value)]
