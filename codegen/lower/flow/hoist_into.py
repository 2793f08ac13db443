"""A guarded call moved into the ``if`` of the call before it on its stream: the nested half of ``hoist.py``.

vllm-ascend's DeepSeek-V4 indexer writes its keys into the key cache under ``if kv is not None:`` and their scales
into the scale cache under a sibling ``if kv is not None and kv_scale is not None:``, with main-stream work between
them (the query's matmul and rotary embedding). The second ``if`` may be issued inside the first, right after the
first call, where it then runs exactly where it ran before:

- both ``if`` statements stand in the function's body with no ``else``; the first call is the last statement of
  the first ``if``'s body, the second call the whole body of the second;
- the first test is the second, or one operand of the second's ``and``, and both only compare names and
  constants by identity (``if_in_block.py``: no op runs, and only rebinding a name changes the answer). Nothing
  between the two rebinds what the second reads (``hoist_above.py``), so where the first test failed the second
  fails too, and where it held, the second reads right after the first call what it read after the statements
  between.

The rest is ``hoist.py``'s: the statements between may run after the second call, the planner's analysis of the
reordered function joins it nowhere among them, and the plan issues fewer sync calls (``if_in_block.py`` puts
the moved ``if`` in the first call's block). :func:`issued` is the function as the plan issues it, both kinds of
move applied; the planner, ``pending_points.py`` and the rewriter (``codegen/rewrite/moved.py``) read it so.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping

from codegen.lower.flow.quiet_tests import identity_test

__all__ = ["guarded_call", "into", "issued"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def guarded_call(stmt: ast.stmt, body: list[ast.stmt]) -> ast.If | None:
    """The ``if`` of ``body`` whose whole body is ``stmt``, with no ``else`` and a test of identities."""
    return next(
        (s for s in body if isinstance(s, ast.If) and s.body == [stmt] and not s.orelse and identity_test(s.test)),
        None,
    )


def into(outer: ast.stmt, moved: ast.If) -> ast.stmt | None:
    """The last statement of ``outer``'s body, where ``moved`` may follow it there: ``outer`` an ``if`` with no
    ``else`` whose test is ``moved``'s or one operand of its ``and``, a test of identities."""
    if not isinstance(outer, ast.If) or outer.orelse or not outer.body or not identity_test(outer.test):
        return None
    test = ast.dump(outer.test)
    tests = moved.test.values if isinstance(moved.test, ast.BoolOp) and isinstance(moved.test.op, ast.And) else []
    implied = ast.dump(moved.test) == test or any(ast.dump(t) == test for t in tests)
    return outer.body[-1] if implied else None


def issued(fn: _Function, moves: Mapping[ast.stmt, ast.stmt]) -> tuple[_Function, dict[ast.AST, ast.AST]]:
    """``fn`` with each moved statement right after the one it follows, in the order the moves were decided (in
    the body, or at the end of an ``if`` of the body); the copies made, each to the node it copies."""
    if not moves:
        return fn, {}
    order, copies = list(fn.body), dict[ast.AST, ast.AST]()
    for moved, after in moves.items():
        if moved not in order:
            continue
        order.remove(moved)
        if after in order:
            order.insert(order.index(after) + 1, moved)
        else:
            _appended(order, moved, after, copies)
    copied = copy.copy(fn)
    copied.body = order
    copies[copied] = fn
    return copied, copies


def _appended(order: list[ast.stmt], moved: ast.stmt, after: ast.stmt, copies: dict[ast.AST, ast.AST]) -> None:
    """The ``if`` of ``order`` whose body ends with ``after`` replaced by a copy whose body ends with ``moved``."""
    at = next(i for i, s in enumerate(order) if isinstance(s, ast.If) and s.body and s.body[-1] is after)
    found = copy.copy(order[at])
    assert isinstance(found, ast.If)
    found.body = [*found.body, moved]
    copies[found] = copies.pop(order[at], order[at])
    order[at] = found
