"""A subtree's nodes, walked once however many questions are asked of it.

The lowering asks a caller's function many questions (its loops, its returns, its calls, what it
stores, its statements' parents), and each used to walk the function again. :func:`walked` gives the
nodes of ``ast.walk(node)`` (but the operator and context singletons), in that order, from one walk kept
while the tree lives; :func:`walked_of` gives those of some kinds. Trees are never changed after parsing,
so a kept walk stays true.
"""

from __future__ import annotations

import ast
import weakref
from typing import TypeVar

from codegen.index.children import children

__all__ = ["walked", "walked_of"]

_N = TypeVar("_N", bound=ast.AST)

_WALKS: weakref.WeakKeyDictionary[ast.AST, tuple[ast.AST, ...]] = weakref.WeakKeyDictionary()
_KINDS: weakref.WeakKeyDictionary[ast.AST, dict[object, tuple[ast.AST, ...]]] = weakref.WeakKeyDictionary()


def walked(node: ast.AST) -> tuple[ast.AST, ...]:
    """The nodes of ``ast.walk(node)`` in its order, but the operator and context singletons, from the kept
    walk when there is one."""
    found = _WALKS.get(node)
    if found is None:
        found = _WALKS[node] = _breadth_first(node)
    return found


def _breadth_first(node: ast.AST) -> tuple[ast.AST, ...]:
    """``tuple(ast.walk(node))`` without the operator and context singletons (``Load()``: read them on their
    node), the other nodes in the same order."""
    found = [node]
    at = 0
    while at < len(found):
        found.extend(children(found[at]))
        at += 1
    return tuple(found)


def walked_of(node: ast.AST, kind: type[_N] | tuple[type[_N], ...]) -> tuple[_N, ...]:
    """The nodes of :func:`walked` that are instances of ``kind``, in its order."""
    kinds = _KINDS.get(node)
    if kinds is None:
        kinds = _KINDS[node] = {}
    found = kinds.get(kind)
    if found is None:
        found = kinds[kind] = tuple(n for n in walked(node) if isinstance(n, kind))
    return found  # type: ignore[return-value]
