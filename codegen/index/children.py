"""A node's children, fast: the walks of the run index, the lowering and the checks go through here.

``ast.iter_child_nodes`` asks every field of every node, operator and context singletons (``Load()``,
``Add()``) and names included; :data:`CHILD_FIELDS` lists, per node class, only the fields that can hold a
node with something under it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

__all__ = ["CHILD_FIELDS", "children", "unordered_walk"]


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
        stack.extend(children(node))


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` without the operator and context singletons (nothing is under them)."""
    found: list[ast.AST] = []
    for name in CHILD_FIELDS.get(type(node), ()):
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend([item for item in value if isinstance(item, ast.AST)])
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


# Fields that never hold a node with anything under it: operator and context singletons, names, numbers, flags.
_SCALARS = {"ctx", "op", "ops", "id", "attr", "arg", "name", "asname", "module", "level", "conversion", "kind"}
_SCALARS |= {"type_comment", "is_async", "simple", "tag", "rest"}
CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {
    kind: tuple(f for f in kind._fields if f not in _SCALARS and not (f == "value" and kind in _CONSTANTS))
    for kind in _node_classes()
}
