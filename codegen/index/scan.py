"""Small ``ast`` queries for the run index: a module's functions, a class's submodules, a function's parameters.

The queries of other kinds live in modules of their own and are named here too, so a reader asks ``scan``:
statements and the module's imports (``blocks``), calls (``calls``), dotted names and what assignments
store (``paths``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index.blocks import imported_names, statements_breadth_first
from codegen.index.calls import callee_name, calls_in
from codegen.index.paths import assignment_targets, assigns_path, dotted_name, is_self_attr, on_path, stored_paths

__all__ = [
    "all_functions",
    "assignment_targets",
    "assigns_path",
    "callee_name",
    "calls_in",
    "dotted_name",
    "forward_params",
    "functions_by_qualname",
    "functions_of",
    "imported_names",
    "on_path",
    "params_of",
    "statements_breadth_first",
    "stored_paths",
    "submodule_assignments",
]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def functions_of(cls: ast.ClassDef) -> list[_Function]:
    return [node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def functions_by_qualname(tree: ast.Module) -> dict[str, _Function]:
    """Top-level functions and methods by qualname (a decorated class's forward is ``Class.forward``)."""
    return {f"{owner}.{fn.name}" if owner else fn.name: fn for owner, fn in all_functions(tree)}


def all_functions(tree: ast.Module) -> Iterator[tuple[str | None, _Function]]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for fn in functions_of(node):
                yield node.name, fn
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, node


def submodule_assignments(cls: ast.ClassDef) -> dict[str, str]:
    """``self.attr = SomeClass(...)`` (or ``mod.SomeClass(...)``) in ``__init__``: {attr: "SomeClass"}."""
    found: dict[str, str] = {}
    for fn in functions_of(cls):
        if fn.name != "__init__":
            continue
        for node in statements_breadth_first(fn):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            cls_name = dotted_name(node.value.func)
            for target in node.targets:
                if is_self_attr(target) and cls_name is not None:
                    found[target.attr] = cls_name
    return found


def params_of(fn: _Function) -> tuple[str, ...]:
    """Every parameter name of ``fn``, in order (``*args`` and ``**kwargs`` included)."""
    args = fn.args
    found = [
        *args.posonlyargs,
        *args.args,
        *([args.vararg] if args.vararg else []),
        *args.kwonlyargs,
        *([args.kwarg] if args.kwarg else []),
    ]
    return tuple(a.arg for a in found)


def forward_params(cls: ast.ClassDef) -> tuple[str, ...]:
    """The parameter names of the class's ``forward`` (none when it defines no forward)."""
    forwards = [fn for fn in functions_of(cls) if fn.name == "forward"]
    return params_of(forwards[0]) if forwards else ()
