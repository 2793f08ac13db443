"""Validate: checks on a module's IR seen with the run index (the rules of ``npudsl check``)."""

from __future__ import annotations

import ast

from codegen.checks import RULES, Context
from codegen.diagnostics import Diagnostic
from codegen.index import RunIndex
from codegen.ir import ModuleIR
from npudsl.devices import DEFAULT_DEVICE, Device

__all__ = ["validate"]


def validate(ir: ModuleIR, index: RunIndex, *, target: str, device: Device = DEFAULT_DEVICE,
             tree: ast.Module | None = None, source: str | None = None) -> tuple[Diagnostic, ...]:
    """Every diagnostic the rules find in ``ir``, by position; errors stop the transform of this file.

    ``device`` bounds the core limits (``transform`` uses the default profile).
    """
    ctx = Context(ir=ir, index=index, target=target, device=device, tree=tree, source=source)
    found = [d for rule in RULES for d in rule.run(ctx)]
    return tuple(sorted(found, key=lambda d: (d.line, d.col, d.code)))
