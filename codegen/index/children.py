"""A node's children, fast: the walks of the run index, the lowering and the checks go through here.

``ast.iter_child_nodes`` asks every field of every node, operator and context singletons (``Load()``,
``Add()``) and names included; :data:`CHILD_FIELDS` lists, per node class, only the fields that can hold a
node with something under it, and whether each holds a list. Which fields hold lists, and which hold
identifiers rather than nodes, is read once from each class's ASDL signature (its docstring,
``Call(expr func, expr* args, keyword* keywords)``), so a list is added whole rather than item by item; a
class whose docstring does not read as one is asked field by field, as ``ast.iter_child_nodes`` does.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

__all__ = ["CHILD_FIELDS", "LEAVES", "children", "unordered_walk"]


def _node_classes() -> list[type[ast.AST]]:
    found, stack = [], [ast.AST]
    while stack:
        kind = stack.pop()
        found.append(kind)
        stack.extend(kind.__subclasses__())
    return found


_CONSTANTS = (ast.Constant, ast.MatchSingleton)


def unordered_walk(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``tree`` (itself included) but the operator and context singletons (``Load()``,
    ``Add()``: read them on their node), in no promised order: for a question whose answer no order changes
    (a count, a set), at about a third of ``ast.walk``'s cost."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if type(node) not in LEAVES:
            stack.extend(children(node))


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` without the operator and context singletons (nothing is under them)."""
    found: list[ast.AST] = []
    fields = CHILD_FIELDS.get(type(node))
    if fields is None:
        return _any_children(node)
    for name, many in fields:
        value = getattr(node, name)
        if many:
            found += value
        elif value is not None:
            found.append(value)
    if None in found:  # a dict's ``**`` entry has no key, a keyword-only parameter may have no default
        found = [item for item in found if item is not None]
    return found


def _any_children(node: ast.AST) -> list[ast.AST]:
    """:func:`children` of a node whose class has no signature read: every field asked."""
    found: list[ast.AST] = []
    for name in _FIELDS.get(type(node), ()):
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend([item for item in value if isinstance(item, ast.AST)])
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


# Fields that never hold a node with anything under it: operator and context singletons, names, numbers, flags.
_SCALARS = {"ctx", "op", "ops", "id", "attr", "arg", "name", "asname", "module", "level", "conversion", "kind"}
_SCALARS |= {"type_comment", "is_async", "simple", "tag", "rest"}
_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {
    kind: tuple(f for f in kind._fields if f not in _SCALARS and not (f == "value" and kind in _CONSTANTS))
    for kind in _node_classes()
}

# The ASDL types of fields that hold no node with anything under it.
_SCALAR_TYPES = {"identifier", "int", "string", "constant", "expr_context", "operator", "unaryop", "boolop", "cmpop"}
_SIGNATURE = re.compile(r"\w+\((.*)\)")


def _typed_fields(kind: type[ast.AST]) -> tuple[tuple[str, bool], ...] | None:
    """(field, holds a list) of the fields of ``kind`` that can hold a node, from its ASDL signature (the
    identifier lists :data:`_FIELDS` keeps, ``global a, b``, are left out); None when its docstring is no
    signature of ``_fields``."""
    found = _SIGNATURE.fullmatch((kind.__doc__ or "").strip())
    if found is None:
        return None
    typed = [part.split() for part in found.group(1).split(",") if part.strip()]
    if any(len(part) != 2 for part in typed) or tuple(name for _, name in typed) != kind._fields:
        return None
    kept = tuple((name, asdl.endswith("*")) for asdl, name in typed if asdl.rstrip("*?") not in _SCALAR_TYPES)
    return kept if {name for name, _ in kept} <= set(_FIELDS[kind]) else None


CHILD_FIELDS: dict[type[ast.AST], tuple[tuple[str, bool], ...]] = {
    kind: fields for kind in _node_classes() if (fields := _typed_fields(kind)) is not None
}

# The node classes with nothing under them (``Name``, ``Constant``, ``alias``...): a walk need not ask their children.
LEAVES = frozenset(kind for kind, fields in CHILD_FIELDS.items() if not fields)
