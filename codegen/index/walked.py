"""A subtree's nodes, walked once however many questions are asked of it.

The lowering asks a caller's function many questions (its loops, its returns, its calls, what it
stores, its statements' parents), and each used to walk the function again. :func:`walked` gives the
nodes of ``ast.walk(node)`` (but the operator and context singletons), in that order, from one walk kept
while the tree lives; :func:`walked_of` gives those of some kinds. Trees are never changed after parsing,
so a kept walk stays true.

An answer is kept on the node itself, with the node it was computed for: a copy of the node
(``copy.copy(fn)`` with its body reordered, ``hoist.py``) carries the original's answers, which it
recomputes, and an answer that holds its own node (a walk starts with it) dies with the tree, as the
collector finds the cycle. A weak dictionary could not drop such an entry: its value reaches its key.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import TypeVar

from codegen.index.children import children

__all__ = ["per_node", "walked", "walked_of"]

_N = TypeVar("_N", bound=ast.AST)
_R = TypeVar("_R")

_KINDS = "_npudsl_walked_of"


def per_node(fn: Callable[[_N], _R]) -> Callable[[_N], _R]:
    """``fn`` of a node computed once and kept while the node lives (its answer must not be changed)."""
    key = f"_npudsl_{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def once(node: _N) -> _R:
        kept = node.__dict__.get(key)
        if kept is not None and kept[0] is node:
            return kept[1]
        found = fn(node)
        node.__dict__[key] = (node, found)
        return found

    return once


@per_node
def walked(node: ast.AST) -> tuple[ast.AST, ...]:
    """The nodes of ``ast.walk(node)`` in its order, but the operator and context singletons (``Load()``: read
    them on their node), from the kept walk when there is one."""
    found = [node]
    at = 0
    while at < len(found):
        found.extend(children(found[at]))
        at += 1
    return tuple(found)


def walked_of(node: ast.AST, kind: type[_N] | tuple[type[_N], ...]) -> tuple[_N, ...]:
    """The nodes of :func:`walked` that are instances of ``kind``, in its order."""
    kept: tuple[ast.AST, dict[object, tuple[ast.AST, ...]]] | None = node.__dict__.get(_KINDS)
    if kept is None or kept[0] is not node:
        kept = node.__dict__[_KINDS] = (node, {})
    found = kept[1].get(kind)
    if found is None:
        found = kept[1][kind] = tuple([n for n in walked(node) if isinstance(n, kind)])
    return found  # type: ignore[return-value]
