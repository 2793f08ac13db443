"""Which expressions and annotations surely stand for a plain value (a number, a string, a tuple of them), as
``scalar_attributes.py`` reads a class's stores: the operands it follows, the calls whose result is plain whatever
they are given (``len(x)``, ``x.size(0)``), and the annotations of plain values (``dim: int``, ``shape: dict[str,
int]``, ``int | None``).
"""

from __future__ import annotations

import ast

from codegen.index import scan

__all__ = ["operands", "plain_annotation", "plain_call"]

_PLAIN = frozenset({"int", "float", "bool", "str", "bytes"})
_PLAIN_CALLS = frozenset({"len", "int", "float", "bool", "str"})  # a plain value whatever they are given
_SIZES = frozenset({"size", "dim", "numel", "ndimension", "element_size", "stride"})


def operands(node: ast.expr) -> list[ast.expr]:
    """The operands of a tuple, an operation, a comparison or a choice (an ``if`` test's value is not taken)."""
    if isinstance(node, ast.Tuple):
        return list(node.elts)
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    assert isinstance(node, ast.IfExp)
    return [node.body, node.orelse]


def plain_call(call: ast.Call) -> bool:
    """``len(x)``, ``int(x)``, ``x.size(0)``: a plain value whatever ``x`` is."""
    if isinstance(call.func, ast.Name):
        return call.func.id in _PLAIN_CALLS
    return isinstance(call.func, ast.Attribute) and call.func.attr in _SIZES and bool(call.args)


def plain_annotation(annotation: ast.expr, *, item: bool) -> bool:
    """``int`` (``item``: ``dict[str, int]``, ``tuple[int, ...]``, ``list[int]``: its items are plain)."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):  # ``int | None``
        parts = [annotation.left, annotation.right]
        return all(_none(p) or plain_annotation(p, item=item) for p in parts) and not all(map(_none, parts))
    if not item:
        return isinstance(annotation, ast.Name) and annotation.id in _PLAIN
    if not isinstance(annotation, ast.Subscript):
        return False
    elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    held = elements[-1:] if scan.dotted_name(annotation.value) in ("dict", "Mapping") else elements
    return all(plain_annotation(e, item=False) or isinstance(e, ast.Constant) for e in held)


def _none(annotation: ast.expr) -> bool:
    return isinstance(annotation, ast.Constant) and annotation.value is None
