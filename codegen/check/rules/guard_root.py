"""NPD204 (error): a ``when`` guard (or a dotted core count) whose root names nothing the function can read.

A guard is read at call time in the decorated function's own scope: its root is ``self`` (a method),
one of its parameters, a global of its module (defined or imported there), or a builtin. Anything
else fails when the function is called, in eager and generated code alike.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.frontend.ir import Guard, Loc, StreamFunction
from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow.function_resolver import module_level_names
from codegen.lower.flow.imports import module_bindings
from npudsl import codes

__all__ = ["RULE"]


def _guards(fn: StreamFunction) -> Iterator[tuple[Guard, Loc]]:
    for spec in fn.decorations:
        if spec.when is not None:
            yield spec.when, spec.loc


def _find(ctx: Context) -> Iterator[Finding]:
    if ctx.tree is None:
        return
    names = module_level_names(ctx.tree) | set(module_bindings(ctx.tree, ""))
    functions = scan.functions_by_qualname(ctx.tree)
    for fn in ctx.ir.functions:
        node = functions.get(fn.qualname)
        params = [a.arg for a in walked_of(node.args, ast.arg)] if node is not None else []
        receiver = params[0] if fn.owner is not None and params and not _static(node) else None
        for guard, loc in _guards(fn):
            problem = _problem(guard, fn, receiver, set(params), names)
            if problem:
                yield Finding(loc=loc, message=problem, hint=_hint(guard, receiver))


def _problem(
    guard: Guard, fn: StreamFunction, receiver: str | None, params: set[str], names: set[str] | frozenset[str]
) -> str | None:
    root = guard.root
    if root == receiver or (root in params and root != "self") or root in names or hasattr(builtins, root):
        return None
    if root == "self":
        return f'when="{guard.dotted}" on {fn.qualname}, which has no self'
    return f'when="{guard.dotted}" on {fn.qualname}: "{root}" is neither a parameter nor a global of this module'


def _hint(guard: Guard, receiver: str | None) -> str:
    if receiver is None:  # a module-level function or a staticmethod: self is not there to read
        flag = guard.dotted.rsplit(".", 1)[-1]
        return (
            f"a function without self reads a parameter or a module global: add a parameter {flag}=True "
            f'and write when="{flag}", or define {flag.upper()} = True in the module and write '
            f'when="{flag.upper()}"'
        )
    return (
        f"root it at {receiver} (this method's receiver), a parameter, or a global of this module, e.g. "
        f'when="{receiver}.{guard.dotted}"'
    )


def _static(node: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
    return node is not None and any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


RULE = Rule(code=codes.GUARD_ROOT, find=_find)
