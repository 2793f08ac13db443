"""A statement that computes before it reads a pending result: the computing part first, then the join.

``return self.routed(x) + shared`` reads ``shared`` only after ``self.routed(x)`` ran; a join before the
statement makes the caller's stream wait for the side stream before the routed experts even start, and the
overlap is lost. Python evaluates the left operand of a binary operation first, so binding it to a name
just before the statement (``routed = self.routed(x)``), then joining, keeps the order of every op and moves
the wait to where the value is needed, as an engineer writes it by hand.

The left operand moves only when it calls something (arithmetic alone is not worth a name), needs no pending
call itself (it reads no result, no state and writes nothing a pending call touches: the analysis' own
transfer says so), and cannot suspend or bind.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable

from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import only_metadata_calls
from codegen.lower.flow.state import State
from codegen.lower.flow.transfer import Join, Step

__all__ = ["first_operand", "temp_name"]

Transfer = Callable[[ast.stmt, State], list[Step]]


def first_operand(stmt: ast.stmt, state: State, transfer: Transfer) -> ast.expr | None:
    """The left operand of ``stmt``'s binary operation, when it can run before the statement's joins."""
    value = stmt.value if isinstance(stmt, (ast.Return, ast.Expr)) else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        value = stmt.value
    if not isinstance(value, ast.BinOp) or only_metadata_calls(value.left):
        return None  # arithmetic alone is not worth a name of its own: only a call is
    if walked_of(value.left, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
        return None
    alone = ast.copy_location(ast.Expr(value=value.left), stmt)
    return None if any(isinstance(s, Join) for s in transfer(alone, state)) else value.left


def temp_name(node: ast.expr) -> str:
    """A name for the operand's value: what it calls (``self.routed(x)`` -> ``routed``), else ``first`` (also for
    a builtin's name: ``(a + b).float()`` binds no local ``float`` that would hide the builtin in the function)."""
    func = node.func if isinstance(node, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "first"
    name = name.lstrip("_")
    return name if name and not hasattr(builtins, name) else "first"
