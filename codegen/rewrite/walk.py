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
_IS_NODE: dict[type, bool] = {}


def _fields(kind: type) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return found


# Nodes that hold no name and no statement: whitespace, punctuation, operators, literals.
_LEAVES = (
    cst.BaseParenthesizableWhitespace,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Newline,
    cst.Comment,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Comma,
    cst.Dot,
    cst.Semicolon,
    cst.Colon,
    cst.AssignEqual,
    cst.ImportStar,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
    cst.SimpleString,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.Ellipsis,
)


def _is_node(kind: type) -> bool:
    """A node type that may hold a name or a statement (remembered: ABC checks are slow in a hot loop)."""
    found = _IS_NODE.get(kind)
    if found is None:
        found = _IS_NODE[kind] = issubclass(kind, cst.CSTNode) and not issubclass(kind, _LEAVES)
    return found


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The direct children of ``node`` that may hold a name or a statement, in no particular order."""
    for name in _fields(type(node)):
        value = getattr(node, name)
        if _is_node(type(value)):
            yield value
        elif type(value) in (list, tuple):
            yield from (item for item in value if _is_node(type(item)))


def names_read(node: cst.CSTNode) -> set[str]:
    """Every ``Name`` under ``node``, except the attribute part of ``x.attr`` (which reads ``x`` only)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.Name:
            found.add(current.value)
        elif kind is cst.Attribute:
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
