"""Fast read-only walks over libcst trees.

A ``CSTVisitor`` rebuilds every node it passes through; these walks only read
the nodes' dataclass fields (every child of a libcst node is one of its fields),
so they answer the same questions several times faster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

__all__ = ["children", "has_return", "names_read"]

_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(kind: type) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return found


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The direct children of ``node`` (in no particular order)."""
    for name in _fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (item for item in value if isinstance(item, cst.CSTNode))


def names_read(node: cst.CSTNode) -> set[str]:
    """Every ``Name`` under ``node``, except the attribute part of ``x.attr`` (which reads ``x`` only)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)
        else:
            stack.extend(children(current))
    return found


def has_return(node: cst.CSTNode) -> bool:
    """Whether ``node`` holds a ``return`` outside functions and classes (a ``def`` itself: False)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Return):
            return True
        if not isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            stack.extend(children(current))
    return False
