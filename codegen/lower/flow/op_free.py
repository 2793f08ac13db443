"""Which statements run an op in appearance only: ``runs_op`` sees a call or an index, yet no kernel is launched.

``alloc_paths.py`` follows a call's paths to the first statement that may allocate on the caller's stream; a
statement that only copies references or takes views (``aliasing.py``), or that looks a key up in a mapping by a
string (``m = table[f"c{r}a"]``: a tensor is never indexed by one), allocates nothing there.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.aliasing import aliasing
from codegen.lower.flow.exprs import runs_op

__all__ = ["appears_only"]


def appears_only(stmt: ast.stmt) -> bool:
    """A statement that runs an op in appearance only: it copies references or takes views (``aliasing.py``), or
    looks a key up in a mapping."""
    return aliasing(stmt) is not None or _lookup(stmt)


def _lookup(stmt: ast.stmt) -> bool:
    """``m = table["key"]`` / ``m = table[f"c{r}a"]``: a string indexes a mapping, never a tensor (no op)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    value = stmt.value
    if not isinstance(value, ast.Subscript):
        return False
    key = value.slice
    plain = isinstance(key, ast.JoinedStr) or (isinstance(key, ast.Constant) and isinstance(key.value, str))
    parts = [value.value, *(v.value for v in walked_of(key, ast.FormattedValue))]
    return plain and not any(runs_op(ast.Expr(part)) for part in parts)
