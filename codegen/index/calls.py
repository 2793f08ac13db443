"""The calls of a function, and whether each one"s statement binds its result (so a join can wait for it later).

The run index finds the call sites of stream functions with these (``self.x(...)`` or ``f(...)``); a call
that is the whole value of a plain statement (``y = f(x)``, ``f(x)``) is *bindable*: the caller can name
its result and join later.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index.children import children
from codegen.index.paths import is_self_attr

__all__ = ["callee_name", "calls_in"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def callee_name(call: ast.Call) -> tuple[bool, str | None]:
    """``self.x(...)`` -> (True, "x"); ``f(...)`` -> (False, "f"); anything else -> (False, None)."""
    if is_self_attr(call.func):
        return True, call.func.attr
    if isinstance(call.func, ast.Name):
        return False, call.func.id
    return False, None


def _bound_call(stmt: ast.stmt) -> ast.Call | None:
    """The call whose result a plain statement binds (or discards), if that is all it does."""
    if isinstance(stmt, ast.Expr) or (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and all(isinstance(t, ast.Name) for t in _names(stmt.targets[0]))
    ):
        value: ast.expr | None = stmt.value
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        value = stmt.value
    else:
        return None
    return value if isinstance(value, ast.Call) else None


def _names(target: ast.expr) -> list[ast.expr]:
    return list(target.elts) if isinstance(target, (ast.Tuple, ast.List)) else [target]


def calls_in(fn: _Function) -> Iterator[tuple[ast.Call, bool]]:
    """Every call in ``fn`` (not in nested functions or classes), and whether its statement binds it."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.stmt):
            bound = _bound_call(node)
            if bound is not None:
                yield bound, True
                stack.append(bound.func)
                stack.extend(bound.args)
                stack.extend(k.value for k in bound.keywords)
                continue
        if isinstance(node, ast.Call):
            yield node, False
        stack.extend(children(node))
