"""The run key a name written in the caller's module stands for, read with that module's own bindings.

A call resolver (:mod:`~codegen.lower.flow.callees`) asks three questions of the names it meets: which function or
class of the run a module-level name is (defined in the module, or imported by name), which class's stream function
an expression naming a class reaches (``Indexer``, ``mod.Indexer`` through ``from . import mod``: a submodule's
assignment, ``Class(...)(x)``), and which class a parameter or local is annotated with. Kept apart from the
resolver's walk over the forms of a call, so each reads alone.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Protocol

from codegen.index.scan import dotted_name
from codegen.lower.flow.annotated_locals import strip_optional
from codegen.lower.flow.imports import Binding

__all__ = ["Names", "annotated_class", "class_key", "global_key", "named_class"]


class Names(Protocol):
    """What of a caller's module and of the run the answers read (a call resolver has each)."""

    module: str  # the module's run key
    bindings: dict[str, Binding]
    module_names: frozenset[str]
    callees: dict[str, object]
    key_of: Callable[[str], str]

    @property
    def local_names(self) -> frozenset[str]: ...

    @property
    def annotations(self) -> dict[str, ast.expr]: ...


def global_key(names: Names, name: str) -> str | None:
    """The run key of a module-level name: defined here, or imported (``from m import f as name``)."""
    binding = names.bindings.get(name)
    if binding is not None and binding.name is not None:
        return f"{names.key_of(binding.module)}:{binding.name}"
    return f"{names.module}:{name}" if name in names.module_names else None


def class_key(names: Names, node: ast.expr, method: str = "forward") -> str | None:
    """The key of the stream function ``method`` of the class ``node`` names (``forward``: calling an instance),
    if the run has one."""
    dotted = dotted_name(node)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    binding = names.bindings.get(head)
    key: str | None = None
    if rest and binding is not None:  # ``mod.Class`` through ``import pkg.mod as mod`` or ``from . import mod``
        base = binding.module if binding.name is None else f"{binding.module}.{binding.name}".lstrip(".")
        module, _, name = f"{base}.{rest}".rpartition(".")
        key = f"{names.key_of(module)}:{name}.{method}"
    elif not rest and head not in names.local_names:
        cls = global_key(names, dotted)
        key = f"{cls}.{method}" if cls else None
    return key if key in names.callees else None


def annotated_class(names: Names, name: str) -> str | None:
    """``module:Class`` of the class the parameter or local ``name`` is annotated with (``X``, ``X | None``,
    ``Optional[X]``, ``"X"``), when it resolves through the module's names."""
    return named_class(names, strip_optional(names.annotations[name]))


def named_class(names: Names, node: ast.expr | None) -> str | None:
    """``module:Class`` of the class ``node`` names in the module (``X``, ``mod.X``), when it resolves."""
    dotted = dotted_name(node) if node is not None else None
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    binding = names.bindings.get(head)
    if rest and binding is not None and binding.name is None:
        module, _, cls = f"{binding.module}.{rest}".rpartition(".")
        return f"{names.key_of(module)}:{cls}"
    return global_key(names, dotted) if not rest else None
