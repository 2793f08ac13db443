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

A statement is walked once too, with the function, class or module that holds it: breadth first, the nodes under
it are a slice of its holder's walk at each level (:class:`_Walk`), so a holder's walk marks its statements with
where they are, and their own walks are read from it. The index walks each module it parses first
(``index.py``); a mark holds its walk weakly, so a statement kept (in a weak dictionary's value, say) does not
keep its module's tree alive.
"""

from __future__ import annotations

import ast
import functools
import weakref
from collections.abc import Callable
from itertools import compress
from typing import TypeVar

from codegen.index.children import LEAVES, children

__all__ = ["per_node", "walked", "walked_of"]

_N = TypeVar("_N", bound=ast.AST)
_R = TypeVar("_R")

_KINDS = "_npudsl_walked_of"
_PLACE = "_npudsl_walked_in"  # where the node is in the kept walk of a node that holds it (``_Place``)
_HELD = "_npudsl_walk"  # on a node whose walk places the nodes under it: that walk
_HOLDERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)  # their statements are walked too
_PLACED = (ast.stmt, ast.arguments)
_CLASSES = "classes"  # in a node's kept kinds: the classes of its walk's nodes


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
    them on their node), from the kept walk when there is one: a statement's from the walk of a function, class or
    module that holds it, where that was walked first."""
    place: _Place | None = node.__dict__.get(_PLACE)
    holder = place.holder() if place is not None else None
    if holder is not None and holder.nodes[place.at] is node:  # type: ignore[union-attr]
        return holder.under(place.at)  # type: ignore[union-attr]
    walk = _Walk.of(node)
    if isinstance(node, _HOLDERS):
        node.__dict__[_HELD] = walk  # it lives as long as the node, which its places do not keep alive
        walk.place(_PLACED)
    return walk.nodes


class _Walk:
    """The nodes under a node in ``ast.walk``'s order (breadth first), and where each one's children start.

    Breadth first, a node's children follow one another, and those of a run of nodes next to one another too; so
    the nodes under any node of the walk, level by level, are slices of it, and their own walk is those slices
    one after the other: ``starts[i]`` is where the children of ``nodes[i]`` start (``starts[i + 1]``, where they
    end)."""

    __slots__ = ("__weakref__", "nodes", "starts")

    def __init__(self, nodes: tuple[ast.AST, ...], starts: list[int]) -> None:
        self.nodes, self.starts = nodes, starts

    @classmethod
    def of(cls, node: ast.AST) -> _Walk:
        found, starts = [node], []
        at = 0
        while at < len(found):
            starts.append(len(found))
            if type(found[at]) not in LEAVES:  # a third of the nodes are names and constants: nothing under them
                found += children(found[at])
            at += 1
        starts.append(len(found))
        return cls(tuple(found), starts)

    def under(self, at: int) -> tuple[ast.AST, ...]:
        """The walk of ``nodes[at]``: the slices of its nodes, one level after another."""
        nodes, starts = self.nodes, self.starts
        found: list[ast.AST] = []
        low, high = at, at + 1
        while low < high:
            found += nodes[low:high]
            low, high = starts[low], starts[high]
        return tuple(found)

    def place(self, kinds: tuple[type, ...]) -> None:
        """Mark the nodes of ``kinds`` in the walk (but its own node) with where they are, for :func:`walked`."""
        held, classes = weakref.ref(self), _classes(kinds)
        for at, node in enumerate(self.nodes):
            if at and type(node) in classes:
                node.__dict__[_PLACE] = _Place(held, at)


class _Place:
    """Where a node is in the kept walk of a node that holds it (held weakly: see above). A tree pickled for a
    worker process (spawned, not forked) carries its places as lost ones: the node is walked afresh there."""

    __slots__ = ("at", "held")

    def __init__(self, held: weakref.ref[_Walk] | None, at: int) -> None:
        self.held, self.at = held, at

    def holder(self) -> _Walk | None:
        return self.held() if self.held is not None else None

    def __reduce__(self) -> tuple[type[_Place], tuple[None, int]]:
        return _Place, (None, 0)


def walked_of(node: ast.AST, kind: type[_N] | tuple[type[_N], ...]) -> tuple[_N, ...]:
    """The nodes of :func:`walked` that are instances of ``kind``, in its order. The classes a walk holds are
    gathered on its second question (a set made at C speed): a kind none of them is answers at once, and the others
    are filtered by class, at C speed."""
    kept: tuple[ast.AST, dict[object, tuple[ast.AST, ...]]] | None = node.__dict__.get(_KINDS)
    if kept is None or kept[0] is not node:
        kept = node.__dict__[_KINDS] = (node, {})
    found = kept[1].get(kind)
    if found is None:
        found = kept[1][kind] = _filtered(walked(node), kind, kept[1])
    return found  # type: ignore[return-value]


def _filtered(nodes: tuple[ast.AST, ...], kind: type | tuple[type, ...], asked: dict) -> tuple[ast.AST, ...]:
    if not asked:  # a walk asked once: no classes gathered
        return tuple(compress(nodes, map(_classes(kind).__contains__, map(type, nodes))))
    present = asked.get(_CLASSES)
    if present is None:
        present = asked[_CLASSES] = frozenset(map(type, nodes))
    wanted = present & _classes(kind)
    if not wanted:
        return ()
    return nodes if len(wanted) == len(present) else tuple(compress(nodes, map(wanted.__contains__, map(type, nodes))))


@functools.cache
def _classes(kind: type | tuple[type, ...]) -> frozenset[type]:
    """The node classes that are ``kind``."""
    found, stack = [], [ast.AST]
    while stack:
        cls = stack.pop()
        found.append(cls)
        stack.extend(cls.__subclasses__())
    return frozenset(cls for cls in found if issubclass(cls, kind))
