"""What runs after a call in its caller, and whether it surely reads a name there (``held_params.py``,
``codegen/lower/flow/held_where.py``): the call's block from the statement after it on, then past the end of each
``if`` branch into what follows the ``if`` (never past a loop's end or the function's), read by ``used_params.py``.
"""

from __future__ import annotations

import ast

import attrs

from codegen.index.used_calls import Scope
from codegen.index.used_params import READ, block_reads
from codegen.index.walked import walked
from codegen.lower.flow.exprs import bound_names

__all__ = ["path_after", "read_after"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def read_after(scope: Scope, caller: _Function, stmt: ast.stmt, name: str | None) -> bool:
    """``caller`` surely reads ``name`` (a name, or an element of the tuple one holds) in an op after ``stmt``
    (which must not rebind it)."""
    path = path_after(scope, caller, stmt, name)
    if path is None:
        return False
    here, blocks = path
    names = {name} if name is not None else set()
    for block in blocks:
        found = block_reads(here, block, names)
        if found != "through":
            return found == READ
    return False


def path_after(
    scope: Scope, caller: _Function, stmt: ast.stmt, name: str | None
) -> tuple[Scope, list[list[ast.stmt]]] | None:
    """The caller's scope and the statements that run after ``stmt``, block by block (its block, then past the end of
    each ``if`` branch into what follows the ``if``); None where ``stmt`` binds ``name`` or returns."""
    if name is None or name.partition("[")[0] in bound_names(stmt) or isinstance(stmt, ast.Return):
        return None
    receiver = caller.args.args[0].arg if scope.owner and caller.args.args else None
    here = attrs.evolve(scope, owner=_owner(scope, caller), receiver=receiver)
    blocks: list[list[ast.stmt]] = []
    block, at = _place(caller, stmt)
    while block is not None:
        blocks.append(block[at + 1 :])
        block, at = _outer_if(caller, block)
    return here, blocks


def _owner(scope: Scope, caller: _Function) -> str | None:
    classes = [c for c in scope.tree.body if isinstance(c, ast.ClassDef) and caller in c.body]
    return classes[0].name if classes else None


def _place(caller: _Function, stmt: ast.stmt) -> tuple[list[ast.stmt] | None, int]:
    for node in walked(caller):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and stmt in block:
                return block, block.index(stmt)
    return None, 0


def _outer_if(caller: _Function, block: list[ast.stmt]) -> tuple[list[ast.stmt] | None, int]:
    """The block holding the ``if`` whose branch ``block`` is, and the ``if``'s place in it (None: no ``if``)."""
    for node in walked(caller):
        if isinstance(node, ast.If) and (node.body is block or node.orelse is block):
            return _place(caller, node)
    return None, 0
