"""Decorator arguments given as a module-level name bound once to a literal (``STREAM_SHARED = "shared"``).

CONTRACT section 1 allows them because real engines name their streams so.
Nothing is evaluated: the name must be bound exactly once in the module, by a
plain ``NAME = <literal>`` (or ``NAME: T = <literal>``, or ``NAME, OTHER = <literal>, <literal>``:
each name of a tuple unpacking a display of as many literals) among the module's own
statements, before the decorator; no class body around a method may bind it, no
function may rebind it with ``global``, and no star import of another module may
shadow it. Anything else cannot be read with certainty and is an error.
"""

from __future__ import annotations

import ast

from codegen.frontend.names.resolve import NpudslNames

__all__ = ["ConstantError", "literal", "module_constant"]

_LITERALS = (str, int, bool, type(None))


class ConstantError(Exception):
    """Why a name or expression cannot be read as a literal (message, hint)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def literal(node: ast.expr) -> object:
    """``ast.literal_eval(node)``, whatever it raises turned into :class:`ConstantError`."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ConstantError(
            "is not a literal (str, int, bool, None)",
            "npudsl reads decorators without running code: use a literal, or a module-level "
            'name bound once to one (STREAM = "side")',
        ) from None


def module_constant(names: NpudslNames, node: ast.Name, scope: ast.ClassDef | None) -> object:
    """The literal that ``node`` names, or :class:`ConstantError` saying why it cannot be read."""
    name = node.id
    hint = f"bind {name} once, at the top level of the module and before its use ({name} = <literal>)"
    if scope is not None and names.bindings_of(name, scope):
        raise ConstantError(f"{name} is bound in the body of class {scope.name}, not at module level", hint)
    if name in names.rebound or "*" in names.rebound:
        why = "a function rebinds it (global)" if name in names.rebound else "a star import may rebind it"
        raise ConstantError(f"{name} cannot be read with certainty: {why}", hint)
    sites = names.bindings_of(name)
    if not sites:
        raise ConstantError(f"{name} is not bound at module level", hint)
    if len(sites) > 1:
        lines = ", ".join(str(site.node.lineno) for site in sites)  # type: ignore[attr-defined]
        raise ConstantError(f"{name} is bound more than once (lines {lines})", hint)
    site = sites[0]
    line = site.node.lineno  # type: ignore[attr-defined]
    if not site.direct:
        raise ConstantError(
            f"{name} is bound at line {line} inside a block (if, try, for, with), not at the top level of the module",
            hint,
        )
    if site.value is None:
        raise ConstantError(f"{name} is bound at line {line}, but not as {name} = <literal>", hint)
    if line >= node.lineno:
        raise ConstantError(f"{name} is bound at line {line}, after its use", hint)
    try:
        value = literal(site.value)
    except ConstantError:
        raise ConstantError(f"{name} is bound at line {line} to an expression, not to a literal", hint) from None
    if not isinstance(value, _LITERALS):
        raise ConstantError(f"{name} is bound to {type(value).__name__}, not to a str, int, bool or None", hint)
    return value
