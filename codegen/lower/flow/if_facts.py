"""An ``if`` test of fixed values as a fact a path knows, and that fact spelled back as a test.

A fact is a test's positive form (its text) and the truth a path knows it has: ``if has_chunked_context:`` gives
("has_chunked_context", True) in its body and ("has_chunked_context", False) in its ``else``. Tests that say the
same thing give the same fact, so ``if x is None:`` and a later ``if x is not None:`` are one test: ``not`` and
``is not`` flip the truth, and ``a or b`` is ``not (not a and not b)``. A test qualifies when every name it reads
holds one value for the whole call (``fixed_values.py``): a truth-fixed name, ``x is None`` of an
identity-fixed name, ``x["k"] is None`` of a contents-fixed one (the key a constant), and ``not``/``and``/``or``
of those. Reading such a test again runs no op and gives the same answer wherever it ran before.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.fixed_values import FixedValues
from codegen.lower.flow.spelling import spelled_expr

__all__ = ["Fact", "fact_of", "spelled"]

Fact = tuple[str, bool]  # a test's positive form, and the truth a path knows it has


def fact_of(test: ast.expr, values: FixedValues) -> Fact | None:
    """The fact ``test`` holding gives; None where it reads anything not fixed."""
    match test:
        case ast.Name(id=name) if name in values.truth:
            return name, True
        case ast.UnaryOp(op=ast.Not(), operand=operand):
            inner = fact_of(operand, values)
            return (inner[0], not inner[1]) if inner else None
        case ast.Compare(left=left, ops=[ast.Is() | ast.IsNot() as op], comparators=[ast.Constant(None)]):
            return (f"{spelled_expr(left)} is None", isinstance(op, ast.Is)) if _fixed(left, values) else None
        case ast.BoolOp(op=op, values=parts):
            found = [f for part in parts if (f := fact_of(part, values)) is not None]
            if len(found) < len(parts):
                return None
            either = isinstance(op, ast.Or)  # ``a or b``: ``not (not a and not b)``
            both = [_test(key, truth != either) for key, truth in found]
            return spelled_expr(ast.BoolOp(op=ast.And(), values=both)), not either
    return None


def spelled(fact: Fact) -> str:
    """The test that holds where ``fact`` does: ``x``, ``not x``, ``x is not None``, ``a is None or b is None``."""
    return spelled_expr(_test(*fact))


def _fixed(value: ast.expr, values: FixedValues) -> bool:
    match value:
        case ast.Name(id=name):
            return name in values.identity
        case ast.Subscript(value=ast.Name(id=name), slice=ast.Constant(value=str() | int())):
            return name in values.contents
    return False


def _test(key: str, truth: bool) -> ast.expr:
    node = ast.parse(key, mode="eval").body
    return node if truth else _negated(node)


def _negated(node: ast.expr) -> ast.expr:
    match node:
        case ast.UnaryOp(op=ast.Not(), operand=operand):
            return operand
        case ast.Compare(left=left, ops=[ast.Is()], comparators=right):
            return ast.Compare(left=left, ops=[ast.IsNot()], comparators=right)
        case ast.Compare(left=left, ops=[ast.IsNot()], comparators=right):
            return ast.Compare(left=left, ops=[ast.Is()], comparators=right)
        case ast.BoolOp(op=op, values=parts):
            flipped = ast.Or() if isinstance(op, ast.And) else ast.And()
            return ast.BoolOp(op=flipped, values=[_negated(p) for p in parts])
    return ast.UnaryOp(op=ast.Not(), operand=node)
