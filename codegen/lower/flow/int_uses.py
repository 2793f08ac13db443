"""Which attributes of a class's objects its own code uses where only a whole number is taken, and which stored values
are read from a configuration object.

``self.n_heads = config.num_attention_heads // tp`` stores a value the class cannot type: ``config`` is an
``__init__`` parameter, and its attribute could be anything (``config.weight`` a tensor). How the class uses it says
what it holds: ``range(self.n_heads)``, a slice bound (``x[:, : self.n_heads]``), a repeated list (``[None] *
self.n_heads``), or a size given to an op that only views a tensor (``q.view(b, self.n_heads, -1)``: an ATen op
whose schema returns views of ``self`` with no kernel, ``schema.views_self``; not ``view_as``, which takes a tensor)
take a whole number, and a tensor there would be an error or a one-element tensor read as its value. Such an
attribute stored from a configuration read is plain (``scalar_attributes.py``): no function writes memory through
it. A configuration read (:func:`config_read`) is an ``__init__`` parameter other than the object (``self.width =
width``), an attribute chain of one (``config.hidden_size``, ``cfg.moe.top_k``), or arithmetic, comparisons and
choices of such reads and plain values; a value computed by a call is not one (``config.make()`` may return a
tensor). A parameter annotated as a transformers configuration (``config: PretrainedConfig``) holds no tensor at
all: what ``__init__`` reads from it is plain however the class uses it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from codegen.index.scan import dotted_name, functions_of
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow import schema

__all__ = ["config_read", "configuration", "int_used"]

_ARITHMETIC = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp)
_CONFIGURATION = "PretrainedConfig"  # transformers' base of every model configuration


@per_node
def int_used(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes of its object that a method of ``cls`` uses where only a whole number is taken (see above)."""
    found: set[str] = set()
    for fn in functions_of(cls):
        receiver = fn.args.args[0].arg if fn.args.args else None
        if receiver is not None:
            found |= {a for node in _int_positions(fn) if (a := _attribute(node, receiver)) is not None}
    return frozenset(found)


def config_read(node: ast.expr, params: frozenset[str], plain: Callable[[ast.expr], bool]) -> bool:
    """``node`` is read from a configuration object: one of ``params`` (not the object) or an attribute chain of one,
    or arithmetic of such reads and values ``plain`` takes, with at least one read."""
    if isinstance(node, ast.Name):
        return node.id in params
    if isinstance(node, ast.Attribute):
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id in params
    if not isinstance(node, _ARITHMETIC):
        return False
    parts = _operands(node)
    reads = [p for p in parts if config_read(p, params, plain)]
    return bool(reads) and all(p in reads or plain(p) for p in parts)


def configuration(annotation: ast.expr | None) -> bool:
    """``config: PretrainedConfig`` (also ``transformers.PretrainedConfig``, quoted, or ``| None``): a transformers
    configuration, whose attributes hold what its JSON file holds (numbers, strings, lists and dicts of them),
    never a tensor."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        parts = [annotation.left, annotation.right]
        return any(configuration(p) for p in parts) and all(configuration(p) or _none(p) for p in parts)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.rpartition(".")[2] == _CONFIGURATION
    return (dotted_name(annotation) or "").rpartition(".")[2] == _CONFIGURATION if annotation is not None else False


def _none(annotation: ast.expr) -> bool:
    return isinstance(annotation, ast.Constant) and annotation.value is None


def _operands(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    assert isinstance(node, ast.IfExp)
    return [node.body, node.orelse]


def _int_positions(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """The expressions ``fn`` puts where only a whole number is taken."""
    found: list[ast.expr] = []
    for call in walked_of(fn, ast.Call):
        if isinstance(call.func, ast.Name) and call.func.id == "range" or _sizes_of_view(call):
            found += [a for a in call.args if not isinstance(a, ast.Starred)]
    for piece in walked_of(fn, ast.Slice):
        found += [b for b in (piece.lower, piece.upper, piece.step) if b is not None]
    for op in walked_of(fn, ast.BinOp):
        if isinstance(op.op, ast.Mult) and isinstance(op.left, (ast.List, ast.Tuple)):
            found.append(op.right)
        elif isinstance(op.op, ast.Mult) and isinstance(op.right, (ast.List, ast.Tuple)):
            found.append(op.left)
    return found


def _sizes_of_view(call: ast.Call) -> bool:
    """``q.view(b, n, -1)``: a tensor method only viewing its tensor, whose arguments are sizes and dims."""
    func = call.func
    return isinstance(func, ast.Attribute) and schema.views_self(func.attr) and not func.attr.endswith("_as")


def _attribute(node: ast.expr, receiver: str) -> str | None:
    """``self.n`` (or ``self.n`` in arithmetic: ``self.n * 2``, ``-self.n``): its attribute."""
    while isinstance(node, (ast.BinOp, ast.UnaryOp)):
        node = node.operand if isinstance(node, ast.UnaryOp) else _attribute_side(node, receiver)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver:
        return node.attr
    return None


def _attribute_side(node: ast.BinOp, receiver: str) -> ast.expr:
    """The operand of ``node`` that holds an attribute of the object (the left one where both or neither do)."""
    right = node.right
    held = isinstance(right, ast.Attribute) and isinstance(right.value, ast.Name) and right.value.id == receiver
    return right if held and not isinstance(node.left, ast.Attribute) else node.left
