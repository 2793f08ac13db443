"""The resolver of one function's calls, from the module's names and the run index.

Kept apart from the search for call sites (:mod:`~codegen.lower.flow.callsites`) because more than the search
builds one: a function's resolver decides which stream function each of its calls reaches, and the checks read
the module's top-level names (``module_level_names``) the same way the resolver does.
"""

from __future__ import annotations

import ast
from typing import Protocol

from codegen.index import scan
from codegen.index.made_class_in import made_class_in
from codegen.lower.flow.callees import Resolver
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.imports import module_bindings
from codegen.lower.flow.inherited_callees import inherited_key

__all__ = ["RunNames", "function_resolver", "module_level_names"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


class RunNames(Protocol):
    """What a resolver reads of the run index: its stream functions, submodules, imports and module keys."""

    callees: dict[str, object]
    submodules: dict[str, dict[str, str]]
    imports: dict[str, dict[str, tuple[str, str]]]

    def package_of(self, module: str) -> str: ...

    def key_of(self, dotted: str) -> str: ...


def module_level_names(tree: ast.Module) -> frozenset[str]:
    """The names a module defines at its top level: classes, functions and assignments."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names |= bound_names(node)
    return frozenset(names)


def function_resolver(
    module: str,
    tree: ast.Module,
    index: RunNames,
    owner: str | None,
    fn: _Function,
    *,
    bindings: dict | None = None,
    names: frozenset[str] | None = None,
) -> Resolver:
    """The resolver of ``fn``'s calls (``bindings``/``names``: the module's, when already computed)."""
    return Resolver(
        module=module,
        owner=owner,
        callees=index.callees,
        submodules=index.submodules,
        elements=getattr(index, "elements", {}),
        bindings=bindings if bindings is not None else module_bindings(tree, index.package_of(module)),
        module_names=names if names is not None else module_level_names(tree),
        function=fn,
        receiver=_receiver(owner, fn),
        key_of=index.key_of,
        class_in=lambda owner_module, written: made_class_in(index, owner_module, written),
        inherited=lambda owner_key, attr, method: inherited_key(index, owner_key, attr, method),
    )


def _receiver(owner: str | None, fn: _Function) -> str | None:
    """The parameter that stands for a method's ``self`` (none for a function, a static or a class method)."""
    params = scan.params_of(fn)
    return params[0] if owner is not None and params and not _static(fn) else None


def _static(fn: _Function) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)
