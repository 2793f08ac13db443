"""Locals that hold a guard's value: ``on = self.multistream`` at the top of a caller, then ``when="on"`` on the
calls it passes ``on`` to, beside ``when="self.multistream"`` on the caller's own methods (omni-infer's decode
MoE). A fork recorded under one spelling serves a call guarded by the other.

A local is such an alias when the caller binds it once, at its body's top level, to a dotted name that
nothing in the caller assigns from there on (``stability.py``; as for every guard, what other code stores is
not seen).
"""

from __future__ import annotations

import ast
from collections import Counter

from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow.stability import Stability

__all__ = ["guard_aliases"]


def guard_aliases(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """{local: the dotted name it holds} for the caller ``fn``."""
    stores = Counter(n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load))
    params = {a.arg for a in walked_of(fn.args, ast.arg)}
    stability = Stability(fn)
    found: dict[str, str] = {}
    for stmt in fn.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        name, dotted = stmt.targets[0].id, scan.dotted_name(stmt.value)
        if dotted and "." in dotted and stores[name] == 1 and name not in params:
            if stability.stable(dotted, stmt.lineno):
                found[name] = dotted
    return found
