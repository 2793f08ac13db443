"""Under which ``if`` each call of a function of ``torch.nn.functional`` runs, as its body's tests say.

``F.embedding`` renorms ``weight`` only under ``if max_norm is not None:``: a write the body makes there holds only
when the caller gives ``max_norm``. A write under ``if p:``, ``if p is not None:`` (or the ``else`` of ``if not p:``,
``if p is None:``), or either side of ``a if p else b``, holds only when ``p`` is given (an ``and`` of such tests:
each of them); any other test guards nothing. ``functional_body_writes.py`` reads a body's calls through
:func:`guarded_calls`; the table build (``torch_functional_build.py``) runs at table-build time only.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

__all__ = ["Guarded", "guarded_calls"]

Guarded = tuple[ast.Call, frozenset[str]]  # a call and the parameters that must be given for it to run


def guarded_calls(node: ast.AST, guards: frozenset[str] = frozenset()) -> Iterator[Guarded]:
    """Each call under ``node`` with the names its ``if`` tests say are given (see above)."""
    if isinstance(node, (ast.If, ast.IfExp)):
        yield from guarded_calls(node.test, guards)
        body: list[ast.AST] = [*node.body] if isinstance(node.body, list) else [node.body]
        orelse: list[ast.AST] = [*node.orelse] if isinstance(node.orelse, list) else [node.orelse]
        for children, more in ((body, _given(node.test)), (orelse, _given(node.test, negated=True))):
            for child in children:
                yield from guarded_calls(child, guards | more)
        return
    if isinstance(node, ast.Call):
        yield node, guards
    for child in ast.iter_child_nodes(node):
        yield from guarded_calls(child, guards)


def _given(test: ast.expr, negated: bool = False) -> frozenset[str]:
    """The names ``test`` holding (or failing, ``negated``) says are given: ``p``, ``p is not None``, an ``and`` of
    them; ``not p``, ``p is None`` where it fails."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and not negated:
        return frozenset().union(*(_given(v) for v in test.values))
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _given(test.operand, not negated)
    if isinstance(test, ast.Name):
        return frozenset() if negated else frozenset({test.id})
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not _none(test.comparators[0]):
        return frozenset()
    given = isinstance(test.ops[0], ast.IsNot) != negated
    return frozenset({test.left.id}) if given and isinstance(test.left, ast.Name) else frozenset()


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
