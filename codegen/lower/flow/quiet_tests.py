"""Which ``if`` tests run no op: one reading of a test's parts for the rules that place code around an ``if``.

A test is parts joined by ``and``/``or``/``not``. Two rules ask of them, at two strengths:

- :func:`compares_only`: each part compares and combines names, attributes and constants (``if
  self.compress_ratio == 4:``, ``if x is None:``): no call, no index, no arithmetic, so its ops, if any (a tensor
  compared), make only the value the branch reads. A captured graph allocates nothing for it (one graph cannot
  branch on data), and GE orders nothing by it (``ge_before.works``; ``alloc_paths.py`` follows both branches).
- :func:`identity_test`: each part compares names and constants by identity (``is``, ``is not``): no op runs
  at all, on any stream, so the side stream may read it in a call's block (``if_in_block.py``). A part that is a
  bare name is not one: its truth may be a tensor's, which is an op.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

__all__ = ["compares_only", "identity_test"]


def compares_only(test: ast.expr) -> bool:
    """Every part of ``test`` compares and combines names, attributes and constants (see above)."""
    return all(_compared(part) for part in _parts(test))


def identity_test(test: ast.expr) -> bool:
    """Every part of ``test`` compares names and constants by identity (see above)."""
    return all(_identity(part) for part in _parts(test))


def _parts(test: ast.expr) -> Iterator[ast.expr]:
    """The parts ``and``, ``or`` and ``not`` join in ``test``."""
    match test:
        case ast.BoolOp(values=values):
            for value in values:
                yield from _parts(value)
        case ast.UnaryOp(op=ast.Not(), operand=operand):
            yield from _parts(operand)
        case _:
            yield test


def _compared(part: ast.expr) -> bool:
    match part:
        case ast.Name() | ast.Constant():
            return True
        case ast.Attribute(value=value):
            return compares_only(value)
        case ast.Compare(left=left, comparators=rest):
            return all(compares_only(side) for side in (left, *rest))
    return False


def _identity(part: ast.expr) -> bool:
    match part:
        case ast.Compare(left=left, ops=ops, comparators=rest):
            identity = all(isinstance(op, (ast.Is, ast.IsNot)) for op in ops)
            return identity and all(isinstance(side, (ast.Name, ast.Constant)) for side in (left, *rest))
    return False
