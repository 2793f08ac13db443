"""The names a compound statement binds: a pending result a rebound name held is no longer reachable through it.

``with ... as t``, ``except E as e``, a nested ``def`` or ``class``, a ``match`` case's captures and a ``for``
loop's target bind names as the statement starts; a pending call whose result such a name held is then held only
by its other names (a later read of the rebound name reads the new value, and needs no join).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.state import State, renamed

__all__ = ["unbound"]


def unbound(state: State, nodes: Sequence[ast.AST]) -> State:
    """``state`` after ``nodes`` bind their names."""
    written = set().union(*(_targets(n) for n in nodes))
    return renamed(state, {p.site: p.names - written for p in state})


def _targets(node: ast.AST) -> frozenset[str]:
    if isinstance(node, ast.withitem):
        return bound_names(node.optional_vars) if node.optional_vars is not None else frozenset()
    if isinstance(node, ast.ExceptHandler):
        return frozenset({node.name} if node.name else ())
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return frozenset({node.name})
    if isinstance(node, ast.pattern):
        return frozenset(n for sub in ast.walk(node) for n in (getattr(sub, "name", None),) if isinstance(n, str))
    return bound_names(node)
