"""What a class defines, as far as its source shows: the names a ``self.NAME`` guard may read.

A guard ``when="self.multistrem"`` (a typo) passes every other check and fails only when the
model runs, far from the decorator. To tell a typo from a real attribute, this collects every
name the class (and its bases defined in the same module) binds: class-body assignments and
functions, ``self.NAME = ...`` in any method, and ``register_buffer``/``register_parameter``/
``add_module``/``register_module`` with a literal name. A class whose members cannot all be
seen (a base from another module, ``setattr``, ``__getattr__``, ``__slots__``) is *open*: the
caller then says nothing, since a missing name there is not proof of a typo.
"""

from __future__ import annotations

import ast

import attrs

from codegen.index.walked import walked_of
from codegen.lower.flow.function_resolver import module_level_names

__all__ = ["Members", "members_of"]

_MODULE_BASES = frozenset({"Module", "nn.Module", "torch.nn.Module", "object"})
# Attributes every nn.Module has (torch.nn.Module.__init__ sets them).
_MODULE_ATTRIBUTES = frozenset({"training"})
_REGISTER = frozenset({"register_buffer", "register_parameter", "add_module", "register_module"})
_OPENERS = frozenset({"__getattr__", "__getattribute__", "__slots__", "__dict__"})


@attrs.frozen
class Members:
    names: frozenset[str]
    open: bool  # some member may be defined where the source does not show it


def members_of(cls: ast.ClassDef, classes: dict[str, ast.ClassDef], _seen: frozenset[str] = frozenset()) -> Members:
    """The members of ``cls``; ``classes`` are the module's top-level classes (for its bases)."""
    names, open_ = set(_MODULE_ATTRIBUTES), False
    for base in cls.bases:
        spelled = ast.unparse(base)
        if spelled in classes and spelled not in _seen:
            inherited = members_of(classes[spelled], classes, _seen | {cls.name})
            names |= inherited.names
            open_ |= inherited.open
        elif spelled not in _MODULE_BASES:
            open_ = True
    own, dynamic = _own_names(cls)
    return Members(names=frozenset(names | own), open=open_ or bool(own & _OPENERS) or dynamic)


def _own_names(cls: ast.ClassDef) -> tuple[set[str], bool]:
    """The names the class binds, and whether it sets names dynamically (one walk of the class for both)."""
    found = set(module_level_names(ast.Module(body=cls.body, type_ignores=[])))  # a class body binds as a module
    dynamic = False
    for node in walked_of(cls, (ast.Attribute, ast.Call)):  # all either test reads
        found |= _self_binding(node)
        dynamic = dynamic or _sets_dynamically(node)
    return found, dynamic


def _self_binding(node: ast.AST) -> set[str]:
    """``self.NAME = ...`` (any receiver spelled ``self``) or ``self.register_buffer("NAME", ...)``."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _is_self(node.value):
        return {node.attr}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _REGISTER:
        first = node.args[0] if node.args else None
        if _is_self(node.func.value) and isinstance(first, ast.Constant) and isinstance(first.value, str):
            return {first.value}
    return set()


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _sets_dynamically(node: ast.AST) -> bool:
    """``setattr(...)`` or ``self.__dict__``: names the source does not spell."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
        return True
    return isinstance(node, ast.Attribute) and node.attr == "__dict__" and _is_self(node.value)
