"""Questions about a function body the name flow asks before walking it.

Which names it declares ``global``/``nonlocal``, its parameters, whether it is
worth walking at all, and whether a ``try`` only guards npudsl's own imports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.frontend.names import bindings

__all__ = ["Function", "declared", "guards_npudsl_import", "parameters", "worth_walking"]

Function = ast.FunctionDef | ast.AsyncFunctionDef


def declared(fn: Function) -> dict[str, str]:
    """Name -> ``"global"`` or ``"nonlocal"``, as the function's own statements declare them."""
    found: dict[str, str] = {}
    for stmt in _own_statements(fn.body):
        if isinstance(stmt, (ast.Global, ast.Nonlocal)):
            found |= dict.fromkeys(stmt.names, "global" if isinstance(stmt, ast.Global) else "nonlocal")
    return found


def parameters(fn: Function) -> list[str]:
    args = fn.args
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]
    return [a.arg for a in found]


def _own_statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements of a function's own scope (not those of nested functions or classes)."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.stmt):
                    stack.append(child)
                elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    stack.extend(child.body)


def worth_walking(fn: Function) -> bool:
    """Whether the body holds something the resolver needs: a decorator or a ``global`` statement."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Global) or getattr(node, "decorator_list", None):
            return True
        stack.extend(
            c for c in ast.iter_child_nodes(node) if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))
        )
    return False


def guards_npudsl_import(stmt: ast.Try) -> bool:
    """``try: <npudsl imports> except ImportError: <fallback>``: where npudsl runs, the fallback never does."""
    imports = all(
        isinstance(s, (ast.Import, ast.ImportFrom))
        and all(v.startswith("npudsl") for _, v in bindings.import_values(s))
        for s in stmt.body
    )
    caught = [h.type for h in stmt.handlers]
    if not imports or not caught or None in caught:
        return False
    spelled = [n for t in caught if t is not None for n in ([t] if not isinstance(t, ast.Tuple) else t.elts)]
    names = [n.id for n in spelled if isinstance(n, ast.Name)]
    return len(names) == len(spelled) and set(names) <= {"ImportError", "ModuleNotFoundError"}
