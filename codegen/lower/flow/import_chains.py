"""A module's imports spelled absolute, and a call's dotted chain, as ``imported_writes.py`` follows a call into
another module of the run.

``from .helpers import bump`` in ``pkg/model.py`` binds ``bump`` to ``("pkg", "helpers", "bump")``; a ``from``
import whose name the module also binds otherwise is no certain binding (None). An import inside a function
(``import torch as th`` or ``import torch_npu`` in a ``forward``, as real code defers imports) binds its name there:
a name no top-level import binds is read by the one the module's functions make (None where two differ), so
``th.relu_(t)`` reaches torch's ``relu_`` as from a top-level import (the premise: a function calling a name that
another function imports imports it too, or the call fails with a ``NameError``). Relative imports resolve
against the module's package as the run knows it, also for a module the run read only when asked
(``codegen/index/pending.py``).
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.lower.flow.imports import Binding, function_bindings, module_bindings

__all__ = ["absolute_imports", "call_chain", "run_package"]


def absolute_imports(tree: ast.Module, package: str) -> dict[str, tuple[str, ...] | None]:
    """The module's imports (local name -> what it names); a ``from`` import bound otherwise too -> None."""
    certain = scan.imported_names(tree)
    found: dict[str, tuple[str, ...] | None] = {}
    for local, binding in module_bindings(tree, package).items():
        found[local] = None if binding.name is not None and local not in certain else _named(binding)
    for local, inside in function_bindings(tree, package).items():  # ``import torch as th`` in a body
        found.setdefault(local, _named(inside) if inside is not None else None)
    return found


def _named(binding: Binding) -> tuple[str, ...]:
    """What an import names, absolute: ``("pkg", "helpers", "bump")``."""
    return (*binding.module.split("."), *([binding.name] if binding.name else []))


def run_package(index: object, key: str) -> str:
    """The package ``key``'s relative imports resolve against, for a module the run read only when asked too."""
    asked = index.returns.asked(key) if hasattr(index.returns, "asked") else None  # type: ignore[attr-defined]
    if asked is not None:
        return asked.dotted if asked.package else asked.dotted.rpartition(".")[0]
    return index.package_of(key)  # type: ignore[attr-defined]


def call_chain(func: ast.expr) -> tuple[str, ...] | None:
    """``a.b.c`` -> ``("a", "b", "c")``; None for anything but a name and its attributes."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    return (func.id, *reversed(parts)) if isinstance(func, ast.Name) else None
