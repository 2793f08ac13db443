"""What the name flow reports: where each name is bound, and the problems it met.

Their own module because the resolver reads them and the scopes store them,
and neither should import the walk that makes them.
"""

from __future__ import annotations

import ast

import attrs

__all__ = ["Problem", "Site"]


@attrs.frozen(kw_only=True)
class Problem:
    node: ast.AST
    message: str
    hint: str


@attrs.frozen(kw_only=True)
class Site:
    """One binding of a name: the statement, and the value when it is a plain ``name = value`` (or the
    element of ``a, b = x, y`` that binds it)."""

    node: ast.AST
    value: ast.expr | None
    direct: bool  # a statement of the scope's own body (not under if, try, a loop, with or match)
