"""Where a sibling's side calls sit: every one inside an ``if`` that can run in one block opened before it.

``sibling_fork.py`` lets a private method's first side call skip its fork where the sibling called before it forked
the stream on every path. That holds only for the sibling's shape read here: its planned calls all on the call's
stream, priority and guard, each alone in a statement of an ``if`` with no ``else`` and a test that runs no op
(``quiet_tests.identity_test``), or of such an ``if`` inside it, and no ``return`` before the first.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from codegen.index.walked import walked
from codegen.lower.flow.callsites import CallSite
from codegen.lower.flow.quiet_tests import identity_test

__all__ = ["every_path_if"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def every_path_if(
    a: _Function, sites: list[CallSite], callees: Mapping[str, object], callee: object
) -> tuple[ast.If, list[ast.stmt]] | None:
    """The ``if`` of A's body holding its first planned call, and every statement of A's body holding one, each on
    the stream, priority and guard of ``callee``, each such statement an ``if`` whose calls can run in one block
    opened before it (see above)."""
    same = ("tag", "priority", "when")
    if not sites or any(
        not callees[s.key].auto or any(getattr(callees[s.key], k) != getattr(callee, k) for k in same)  # type: ignore[attr-defined]
        for s in sites
    ):
        return None
    calls = {id(s.call) for s in sites}
    holding = [st for st in a.body if any(id(n) in calls for n in walked(st))]
    if not all(_side_if(st, calls) for st in holding):
        return None
    x = holding[0]
    assert isinstance(x, ast.If)
    early = any(isinstance(n, ast.Return) for st in a.body[: a.body.index(x)] for n in walked(st))
    return None if early else (x, holding)


def _side_if(stmt: ast.stmt, calls: set[int]) -> bool:
    """``if <identity test>:`` with no ``else``, each statement of its body one planned call, or such an ``if``
    around one."""
    if not isinstance(stmt, ast.If) or not _quiet_if(stmt):
        return False
    inner = [st.body[0] if isinstance(st, ast.If) and _quiet_if(st) and len(st.body) == 1 else st for st in stmt.body]
    return all(_alone(st, calls) for st in inner)


def _quiet_if(stmt: ast.If) -> bool:
    return not stmt.orelse and identity_test(stmt.test)


def _alone(stmt: ast.stmt, calls: set[int]) -> bool:
    """A statement that only calls one planned call and binds or drops its result."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
    return value is not None and id(value) in calls
