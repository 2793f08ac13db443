"""Dotted paths: ``a.b.c`` as a chain of attributes spells it, and the paths assignments store to.

The index keys submodules and guards by their dotted spelling, and asks whether a stream function flips
its own guard (``self.on = False`` under ``when="self.on"``); the flow planner asks what a statement
stores. Both read the targets of ``=``, ``+=`` and annotated assignments as dotted names (``self.on``,
``cfg``), spelled one way for every reader.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from codegen.index.walked import walked_of

__all__ = ["assignment_targets", "assigns_path", "dotted_name", "is_self_attr", "on_path", "stored_paths"]


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def is_self_attr(node: ast.expr) -> TypeGuard[ast.Attribute]:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def assignment_targets(node: ast.AST) -> list[ast.expr]:
    """What an assignment stores to (``a = b = f()``, ``a += 1``, ``a: int = 0``); nothing for other nodes."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []


def assigns_path(node: ast.AST, dotted: str) -> bool:
    """``node`` assigns the root of ``dotted`` or an attribute along its path (``self.on = False`` for
    ``self.on``, ``cfg = ...`` for ``cfg.multi.enabled``)."""
    return on_path(stored_paths(node), dotted)


def stored_paths(node: ast.AST) -> set[str]:
    """The dotted names the assignments under ``node`` store to (``self.on``, ``cfg``)."""
    stores = walked_of(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
    return {t for sub in stores for t in map(dotted_name, assignment_targets(sub)) if t}


def on_path(stored: set[str] | frozenset[str], dotted: str) -> bool:
    """``stored`` holds the root of ``dotted`` or an attribute along its path."""
    parts = dotted.split(".")
    return any(".".join(parts[:i]) in stored for i in range(1, len(parts) + 1))
