"""Where a caller's statements stand, and which of its names a call's argument hands over.

The lowering's decisions read a function by its blocks (the list each statement stands in), its loops and its
statements that are not compound, and a call's arguments by the names whose memory they pass to the call.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.index.blocks import STATEMENT_HOLDERS
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.arguments import Argument
from codegen.lower.flow.exprs import data_reads

__all__ = [
    "COMPOUND",
    "argument_names",
    "in_loops",
    "simple_statements",
    "slot_node",
    "statement_blocks",
    "viewed",
]

COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.Match,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def argument_names(argument: Argument, receiver: str | None, hoisted: dict[int | str, str]) -> list[str]:
    """The caller's names whose memory an argument hands to the call: the name passed whole (or the name it was
    bound to), or the names an expression reads as values (``x`` in ``x[i]``; not ``cfg`` in ``cfg.scale``, state
    that lives on)."""
    if argument.slot in hoisted:
        return [hoisted[argument.slot]]
    if argument.bare and argument.name:
        return [argument.name]
    state = _objects(argument.node)
    names = {
        n.id
        for n in ast.walk(argument.node)
        if isinstance(n, ast.Name) and id(n) not in state and not isinstance(n.ctx, ast.Store)
    }
    return sorted((names & data_reads(argument.node)) - {receiver})


def _objects(node: ast.expr) -> set[int]:
    """The names (by id) whose attribute ``node`` reads as a value (``cfg`` in ``cfg.scale``), not a method's
    object (``x`` in ``x.sum()``)."""
    methods = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    return {
        id(n.value)
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute) and id(n) not in methods and isinstance(n.value, ast.Name)
    }


def slot_node(call: ast.Call, slot: int | str) -> ast.expr:
    if isinstance(slot, int):
        node = call.args[slot]
        return node.value if isinstance(node, ast.Starred) else node
    return next(k.value for k in call.keywords if (k.arg or "**") == slot)


def viewed(node: ast.expr) -> str | None:
    """The name whose memory an index or slice chain of it shares (``x[:n]``, ``x[0].y``); None otherwise."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


@per_node
def statement_blocks(fn: ast.AST) -> dict[ast.stmt, list[ast.stmt]]:
    """Each statement's block (the list it stands in); read once per function (not to be changed)."""
    found: dict[ast.stmt, list[ast.stmt]] = {}
    for node in walked_of(fn, STATEMENT_HOLDERS):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                found.update({stmt: block for stmt in block if isinstance(stmt, ast.stmt)})
    return found


def simple_statements(fn: ast.AST) -> list[ast.stmt]:
    """The function's statements that are not compound."""
    return [s for s in _statements(fn) if not isinstance(s, COMPOUND)]


def in_loops(fn: ast.AST) -> set[ast.stmt]:
    loops = walked_of(fn, (ast.For, ast.AsyncFor, ast.While))
    return {stmt for loop in loops for stmt in _statements(loop)}


def _statements(node: ast.AST) -> Iterable[ast.stmt]:
    return (n for n in walked_of(node, ast.stmt) if n is not node)
