"""Hygienic names for generated code: it never reads a name the user can shadow, nor shadows one.

Every identifier of a module (at any depth) is taken. A generated module-level name (a helper, an
event, an import) is the readable one when it is free, else the first free ``<name>_<n>``; an import
the module already has is reused when its name is bound nowhere else. A generated local (a flag,
a bound argument, ``out``) is fresh in its function, and also avoids every generated global.

A module's identifiers are counted in one walk, kept with its tree and shared by every
stage that asks (the run index, lower, these names): nothing here walks a module twice,
however many imports its generated code needs.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable
from typing import Any

import attrs

from codegen.index.children import unordered_walk
from codegen.index.walked import per_node, walked

__all__ = ["ModuleNames", "identifiers"]


@attrs.frozen
class _Spelled:
    """What one walk of a tree finds: every identifier bound or read, and the names read."""

    taken: Counter[str]
    loads: Counter[str]


def identifiers(node: ast.AST) -> Counter[str]:
    """How many times each identifier is bound or read under ``node``.

    A module is walked once however often it is asked for (the index, lower and the hygienic names
    all ask): the count is kept while the tree lives. Callers must not change what they get.
    """
    return _module_spelled(node).taken


def _spelled(node: ast.AST) -> _Spelled:
    found: dict[str, int] = {}  # plain dicts while counting (a Counter's missing key costs a method call)
    loads: dict[str, int] = {}
    # counts: the order is no matter; a module's walk is the index's (``walked.py``), a function's one of its own
    for sub in walked(node) if isinstance(node, ast.Module) else unordered_walk(node):
        kind = type(sub)
        if kind is ast.Name:
            name = sub.id  # type: ignore[attr-defined]
            found[name] = found.get(name, 0) + 1
            if type(sub.ctx) is ast.Load:  # type: ignore[attr-defined]
                loads[name] = loads.get(name, 0) + 1
        else:
            binder = _BINDERS.get(kind)
            for name in binder(sub) if binder is not None else ():
                found[name] = found.get(name, 0) + 1
    return _Spelled(taken=Counter(found), loads=Counter(loads))


def _named(node: Any) -> list[str]:
    return [node.name] if node.name else []


_BINDERS: dict[type[ast.AST], Callable[[Any], list[str]]] = {
    ast.arg: lambda n: [n.arg],
    ast.FunctionDef: _named,
    ast.AsyncFunctionDef: _named,
    ast.ClassDef: _named,
    ast.alias: lambda n: [(n.asname or n.name).split(".")[0]],
    ast.Global: lambda n: n.names,
    ast.Nonlocal: lambda n: n.names,
    ast.ExceptHandler: _named,
    ast.MatchAs: _named,
    ast.MatchStar: _named,
}


_module_spelled = per_node(_spelled)  # a module's, or a function's (the lowering asks of each caller again)


@attrs.define(eq=False)
class ModuleNames:
    """The names one module's generated code uses, chosen against everything the module spells."""

    tree: ast.Module
    taken: Counter[str] = attrs.field(init=False)
    generated: dict[str, str] = attrs.Factory(dict)  # wanted -> chosen, for module-level names

    def __attrs_post_init__(self) -> None:
        self.taken = identifiers(self.tree)

    def fresh(self, wanted: str, also: set[str] | frozenset[str] = frozenset()) -> str:
        """``wanted`` if neither the module nor ``also`` uses it, else ``wanted_1``, ``wanted_2``..."""
        name, n = wanted, 0
        while name in self.taken or name in also or name in self.generated.values():
            n += 1
            name = f"{wanted}_{n}"
        return name

    def global_name(self, wanted: str) -> str:
        """A module-level name of the generated code, the same for the same ``wanted`` in this module."""
        if wanted not in self.generated:
            self.generated[wanted] = self.fresh(wanted)
        return self.generated[wanted]

    def imported(self, module: str, name: str | None = None, *, wanted: str | None = None) -> tuple[str, str | None]:
        """(local name, import line or None) for ``import module`` / ``from module import name``.

        The module's own top-level import is reused when it binds the local name once in the module.
        """
        key = f"{module}:{name}"
        local = wanted or (name or module.split(".")[0])
        existing = self._existing_import(module, name)
        if existing is not None and self.taken[existing] == 1 + self._loads(existing):
            self.generated.setdefault(key, existing)
            return existing, None
        chosen = self.global_name(key) if key in self.generated else self._claim(key, local)
        if name is None:
            line = f"import {module}" if chosen == module else f"import {module} as {chosen}"
        else:
            line = f"from {module} import {name}" if chosen == name else f"from {module} import {name} as {chosen}"
        return chosen, line

    def _claim(self, key: str, local: str) -> str:
        self.generated[key] = self.fresh(local)
        return self.generated[key]

    def _existing_import(self, module: str, name: str | None) -> str | None:
        for node in self.tree.body:
            if isinstance(node, ast.Import) and name is None:
                for alias in node.names:
                    if alias.name == module and (alias.asname or "." not in module):
                        return alias.asname or module
            elif isinstance(node, ast.ImportFrom) and name is not None and node.module == module and not node.level:
                for alias in node.names:
                    if alias.name == name:
                        return alias.asname or name
        return None

    def _loads(self, name: str) -> int:
        return _module_spelled(self.tree).loads[name]
