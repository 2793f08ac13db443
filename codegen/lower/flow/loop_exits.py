"""Whether a loop may end an iteration early: a ``break`` or ``continue`` of its own, or a ``return``.

A micro-batch loop's call takes a join event per iteration parity (``slot_loops.py``) only where every iteration
reaches the call: an iteration that leaves early records nothing, and a later wait for its slot would wait for an
event no call recorded. Every ``break`` and ``continue`` anywhere in the loop was taken for such an exit, so an
inner ``while`` that leaves itself (``while out[i] is None: ... break``) made the outer loop's calls wait for each
other. A ``break`` or ``continue`` belongs to the innermost loop around it: one inside an inner ``for`` or
``while`` ends an iteration of that loop, and the outer iteration goes on to the call. A ``return`` leaves every
loop; one inside a nested function, lambda or class body leaves only that function (and none runs as the loop's
own work), so it is none of the loop's exits either.
"""

from __future__ import annotations

import ast

from codegen.index.children import children

__all__ = ["leaves_early"]

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def leaves_early(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """An iteration of ``loop`` may end before its body's last statement: a ``break`` or ``continue`` of this loop
    (not of a loop inside it), or a ``return`` of the function around it."""
    return any(_exits(stmt, own=True) for stmt in [*loop.body, *loop.orelse])


def _exits(node: ast.AST, own: bool) -> bool:
    """``node`` holds a ``return``, or (``own``: still in the loop asked about, not in one inside it) a ``break`` or
    ``continue``."""
    if isinstance(node, ast.Return):
        return True
    if isinstance(node, (ast.Break, ast.Continue)):
        return own
    if isinstance(node, _SCOPES):
        return False
    if isinstance(node, _LOOPS):  # its body's break and continue are its own; its ``else`` is the outer loop's work
        return any(_exits(s, own=False) for s in node.body) or any(_exits(s, own=own) for s in node.orelse)
    return any(_exits(child, own) for child in children(node))
