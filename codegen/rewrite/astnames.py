"""The names libcst's :func:`codegen.rewrite.walk.names_read` finds, read from an ``ast`` instead.

libcst makes a ``Name`` of every identifier but the attribute part of ``x.attr``: names,
definitions, parameters, keywords, imported names and their aliases (of a dotted module,
the first part), ``global`` and ``nonlocal`` names, ``except ... as`` names, the names
of patterns, and ``None``, ``True`` and ``False``. The text rewrite reads them from the
``ast`` it already has (or parses its new text), where libcst would parse the statement.
"""

from __future__ import annotations

import ast

from codegen.index.children import unordered_walk

__all__ = ["names_read"]


def names_read(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in unordered_walk(tree):
        found.update(_names(node))
    return found


def _names(node: ast.AST) -> list[str]:
    kind = type(node)
    if kind is ast.Name:
        return [node.id]  # type: ignore[attr-defined]
    if kind is ast.Constant and any(node.value is v for v in (None, True, False)):  # type: ignore[attr-defined]
        return [str(node.value)]  # type: ignore[attr-defined]  # libcst's ``Name("None")``
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return [node.name]  # type: ignore[attr-defined]
    if kind is ast.arg:
        return [node.arg]  # type: ignore[attr-defined]
    if kind is ast.keyword:
        return [node.arg] if node.arg is not None else []  # type: ignore[attr-defined]
    if kind is ast.alias:
        return _alias(node)  # type: ignore[arg-type]
    if kind is ast.ImportFrom:
        return [node.module.split(".")[0]] if node.module else []  # type: ignore[attr-defined]
    if kind in (ast.Global, ast.Nonlocal):
        return list(node.names)  # type: ignore[attr-defined]
    if kind in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
        return [node.name] if node.name is not None else []  # type: ignore[attr-defined]
    if kind is ast.MatchMapping:
        return [node.rest] if node.rest is not None else []  # type: ignore[attr-defined]
    if kind is ast.MatchClass:
        return list(node.kwd_attrs)  # type: ignore[attr-defined]
    return []


def _alias(node: ast.alias) -> list[str]:
    if node.name == "*":
        return []
    names = [node.name.split(".")[0]]
    return names + [node.asname] if node.asname else names
