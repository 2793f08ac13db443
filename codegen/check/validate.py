"""Validate: checks on a module's IR seen with the run index (the rules of ``npudsl check``).

Python refuses some code only when it compiles it, not when it parses it (``break``
outside a loop, a duplicate parameter, a repeated keyword): such a module would fail
on import, so it is reported as a syntax error (NPD001) and never transformed.
"""

from __future__ import annotations

import ast
import warnings

from codegen.check.diagnostics import Diagnostic
from codegen.check.rules import RULES, Context
from codegen.frontend.ir import ModuleIR
from codegen.index.index import RunIndex
from npudsl import codes
from npudsl.devices import DEFAULT_DEVICE, Device

__all__ = ["compile_error", "validate"]


def validate(
    ir: ModuleIR,
    index: RunIndex,
    *,
    target: str,
    device: Device = DEFAULT_DEVICE,
    tree: ast.Module | None = None,
    source: str | None = None,
) -> tuple[Diagnostic, ...]:
    """Every diagnostic the rules find in ``ir``, by position; errors stop the transform of this file.

    ``device`` bounds the core limits (``transform`` uses the default profile).
    """
    refused = compile_error(tree, ir.path) if tree is not None else None
    ctx = Context(ir=ir, index=index, target=target, device=device, tree=tree, source=source)
    found = [d for rule in RULES for d in rule.run(ctx)] + ([refused] if refused else [])
    return tuple(sorted(found, key=lambda d: (d.line, d.col, d.code)))


def compile_error(tree: ast.Module, path: str) -> Diagnostic | None:
    """NPD001 for what Python's compiler refuses in a tree its parser accepted, else None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning (``is`` with a literal, ...) is not ours to report
            compile(tree, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return Diagnostic(
            path=path,
            line=max(exc.lineno or 1, 1),
            col=max(exc.offset or 1, 1),
            code=codes.SYNTAX,
            message=f"Python refuses this code when it compiles it: {exc.msg}",
            hint="fix it as Python says; the module would fail on import",
        )
    except (RecursionError, ValueError):
        return None  # too deep or otherwise uncompilable here: the parser's own checks have spoken
    return None
