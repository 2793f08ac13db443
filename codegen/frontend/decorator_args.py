"""Read one decorator's arguments into its spec, or say what is wrong, by the rules of its registry entry.

Arguments are literals, or module-level names bound once to a literal (see
:mod:`codegen.frontend.constants`); ``core_limit`` counts may also be dotted names as
strings, read at call time. Whatever the argument, a problem is a positioned
diagnostic, never an exception.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import attrs

from codegen.check.diagnostics import Diagnostic
from codegen.frontend.constants import ConstantError, literal, module_constant
from codegen.frontend.names.resolve import NpudslNames
from codegen.frontend.positions import Positions
from npudsl import codes, decorators
from npudsl.schedule import DECORATORS

__all__ = ["Scope", "parse"]


def _shape(decorator: str) -> inspect.Signature:
    """The decorator's own signature (``npudsl.decorators``), less the slot for a bare use (``@keep_output``)."""
    full = inspect.signature(getattr(decorators, decorator))
    return full.replace(parameters=[p for p in full.parameters.values() if p.kind is not p.POSITIONAL_ONLY])


_SHAPES = {name: _shape(name) for name in DECORATORS}

Result = tuple[Any, list[Diagnostic]]


class _Invalid(Exception):
    def __init__(self, node: ast.AST, code: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.node, self.code, self.message, self.hint = node, code, message, hint


@attrs.frozen(kw_only=True)
class Scope:
    """Where a decorator stands: the module's names, and the class whose method it decorates (if any)."""

    names: NpudslNames | None = None
    cls: ast.ClassDef | None = None


def parse(decorator: str, node: ast.expr, positions: Positions, path: str, scope: Scope = Scope()) -> Result:
    """The spec for ``node`` (an ``@decorator`` or ``@decorator(...)``), or diagnostics: the rules of its registry
    entry, the ones the decorator applies at run time, each violation placed at the argument that breaks it."""
    entry = DECORATORS[decorator]
    try:
        bound, arg_nodes = _bind(decorator, node, scope)
        bound.apply_defaults()
        found = entry.violation(bound.arguments)
        if found is not None:
            argument, violation = found
            given: Any = arg_nodes.get(argument) or node  # a list for ``*events``; none given: the decorator
            place = given if violation.item is None else given[violation.item]
            raise _Invalid(place, violation.code, violation.message, violation.hint)
        return entry.make(bound.arguments, positions.loc(node)), []
    except _Invalid as bad:
        at = positions.loc(bad.node)
        return None, [
            Diagnostic(path=path, line=at.line, col=at.col, code=bad.code, message=bad.message, hint=bad.hint)
        ]


def _bind(decorator: str, node: ast.expr, scope: Scope) -> tuple[inspect.BoundArguments, dict[str, Any]]:
    if not isinstance(node, ast.Call):
        if DECORATORS[decorator].bare:
            return _SHAPES[decorator].bind(), {}
        raise _Invalid(node, codes.BAD_ARGUMENTS, f"@{decorator} needs arguments", f"call it: @{decorator}(...)")
    values, nodes = [], []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise _Invalid(
                arg, codes.NOT_LITERAL, f"@{decorator} arguments must be literals, not *args", "spell each one out"
            )
        values.append(_literal(decorator, arg, scope))
        nodes.append(arg)
    kwvalues = {}
    kwnodes = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise _Invalid(
                kw.value,
                codes.NOT_LITERAL,
                f"@{decorator} arguments must be literals, not **kwargs",
                "spell each one out",
            )
        kwvalues[kw.arg], kwnodes[kw.arg] = _literal(decorator, kw.value, scope), kw.value
    try:
        bound = _SHAPES[decorator].bind(*values, **kwvalues)
    except TypeError as exc:
        raise _Invalid(
            node, codes.BAD_ARGUMENTS, f"@{decorator}: {exc}", f"see the signature of {decorator} in the docs"
        ) from None
    by_name: dict[str, Any] = {name: kwnodes.get(name) for name in bound.arguments}
    positional = iter(nodes)
    for name, param in _SHAPES[decorator].parameters.items():
        if name in bound.arguments and name not in kwnodes:
            by_name[name] = nodes if param.kind is param.VAR_POSITIONAL else next(positional)
    return bound, by_name


def _literal(decorator: str, node: ast.expr, scope: Scope) -> object:
    try:
        if isinstance(node, ast.Name) and scope.names is not None:
            return module_constant(scope.names, node, scope.cls)
        return literal(node)
    except ConstantError as bad:
        what = node.id if isinstance(node, ast.Name) else "argument"
        message = bad.message if isinstance(node, ast.Name) else f"{what} {bad.message}"
        raise _Invalid(node, codes.NOT_LITERAL, f"@{decorator}: {message}", bad.hint) from None
