"""The statement structure of a tree: which fields of a node hold blocks, walked without a single expression.

The index and the collector walk statements often (a class's ``__init__``, a module's imports), and
walking every expression node to find them costs most of a walk. These walks visit statements (and
handlers, match cases) only, in the order ``ast.walk`` would give them.

The module's own scope (its body and the blocks of its ``if``, ``try``, ``with`` and loops) is where the
names it imports are bound: cross-file facts (a stream function imported by name, what an imported
function returns) follow ``from <spec> import Name as local`` only where that binding is certain.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

__all__ = ["BLOCK_FIELDS", "STATEMENT_HOLDERS", "imported_names", "module_scope", "statements_breadth_first"]

_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)

_KINDS: tuple[type[ast.AST], ...] = (ast.Module, *ast.stmt.__subclasses__(), ast.ExceptHandler, ast.match_case)
BLOCK_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {
    kind: tuple(f for f in kind._fields if f in ("body", "orelse", "finalbody", "handlers", "cases")) for kind in _KINDS
}
# the node classes with a ``body``, ``orelse`` or ``finalbody`` list of statements (a walk asks these only)
STATEMENT_HOLDERS = tuple(kind for kind, fields in BLOCK_FIELDS.items() if {"body", "orelse", "finalbody"} & {*fields})


def statements_breadth_first(tree: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(tree)`` restricted to statements (and handlers, match cases), in the same order.

    A statement's parent is always a statement, a handler, a case or the module, so the restriction
    keeps ``ast.walk``'s relative order (breadth first) without visiting a single expression.
    """
    queue: deque[ast.AST] = deque([tree])
    while queue:
        node = queue.popleft()
        yield node
        for name in BLOCK_FIELDS.get(type(node), ()):
            queue.extend(child for child in getattr(node, name) if isinstance(child, _BLOCKS))


def module_scope(tree: ast.Module) -> Iterator[ast.stmt]:
    """The statements of the module's own scope: its body, and the blocks of its if, try, with and loops."""
    stack: list[ast.AST] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            for name in reversed(BLOCK_FIELDS.get(type(node), ())):
                stack.extend(reversed(getattr(node, name)))


def imported_names(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """``from <spec> import Name as local`` in the module's scope (under ``if``/``try`` too):
    {local: (spec, Name)}, with leading dots for relative imports. A name imported from two
    places, or bound by another statement of the module's scope too, is left out: it cannot be bound with certainty.
    """
    found: dict[str, tuple[str, str]] = {}
    other: set[str] = set()
    for node in module_scope(tree):
        if isinstance(node, ast.ImportFrom):
            _import_from(node, found, other)
        else:
            other.update(_bound_otherwise(node))
    return {local: origin for local, origin in found.items() if local not in other}


def _import_from(node: ast.ImportFrom, found: dict[str, tuple[str, str]], other: set[str]) -> None:
    """Record what ``from <spec> import ...`` binds; a name bound from elsewhere before joins ``other``."""
    spec = "." * node.level + (node.module or "")
    for a in node.names:
        local = a.asname or a.name
        if found.get(local, (spec, a.name)) != (spec, a.name):
            other.add(local)
        found[local] = (spec, a.name)


def _bound_otherwise(node: ast.stmt) -> list[str]:
    """The names a statement of the module's scope binds other than by ``from ... import``."""
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return [node.name]
    if isinstance(node, ast.Import):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)]
    return []
