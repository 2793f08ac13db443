"""Apply one decorated function's own plan: its core limit around the body, its ``@after`` waits first, its
clones and ``@records`` at every return. Its signature is the user's: nothing is added to it."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from codegen.lower.plan import FunctionPlan, Step
from codegen.rewrite.build import guarded_statements, parse_statement, with_items_text, with_text
from codegen.rewrite.returns import ReturnRewriter, always_returns, local_names
from codegen.rewrite.walk import children, has_return
from codegen.targets.base import Spelling, wants_values

__all__ = ["rewrite_body", "wrap_with"]

_DOCSTRING = m.SimpleStatementLine(body=[m.Expr(m.SimpleString() | m.ConcatenatedString())])


def rewrite_body(node: cst.FunctionDef, plan: FunctionPlan, spelling: Spelling) -> cst.FunctionDef:
    """``node`` with its body rewritten by ``plan`` (decorators are the caller's business)."""
    body = _statements(node.body)
    docstring = body[:1] if body and m.matches(body[0], _DOCSTRING) else []
    body = body[len(docstring) :]
    epilogue, finally_steps = _split_epilogue(plan, body)
    if epilogue:
        body = _with_epilogue(node, body, epilogue, plan, spelling)
    if finally_steps:
        body = [
            cst.Try(
                body=cst.IndentedBlock(body=body),
                finalbody=cst.Finally(body=cst.IndentedBlock(body=guarded_statements(spelling, finally_steps))),
            )
        ]
    inner = guarded_statements(spelling, plan.prologue) + body
    outer = wrap_with(with_items_text(spelling, plan.contexts), inner)
    return node.with_changes(body=cst.IndentedBlock(body=[*docstring, *outer], header=_header(node)))


def _split_epilogue(plan: FunctionPlan, body: list[cst.BaseStatement]) -> tuple[tuple[Step, ...], tuple[Step, ...]]:
    """A ``return`` inside ``try`` with a ``finally`` runs the ``finally`` after it: the steps that need no
    returned value (records, the join's record) then move to a ``finally`` around the whole body."""
    if not any(_returns_through_finally(stmt) for stmt in body):
        return plan.epilogue, ()
    return (tuple(s for s in plan.epilogue if wants_values(s)), tuple(s for s in plan.epilogue if not wants_values(s)))


def _returns_through_finally(node: cst.CSTNode) -> bool:
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return False
    if isinstance(node, (cst.Try, cst.TryStar)) and node.finalbody is not None:
        parts = [node.body, *(h.body for h in node.handlers), *([node.orelse.body] if node.orelse else [])]
        if any(has_return(part) for part in parts):
            return True
    return any(_returns_through_finally(child) for child in children(node))


def _statements(body: cst.BaseSuite) -> list[cst.BaseStatement]:
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    return [cst.SimpleStatementLine(body=list(body.body))]  # type: ignore[attr-defined]


def _header(node: cst.FunctionDef) -> cst.TrailingWhitespace:
    if isinstance(node.body, cst.IndentedBlock):
        return node.body.header
    return cst.TrailingWhitespace()


def _with_epilogue(
    node: cst.FunctionDef,
    body: list[cst.BaseStatement],
    epilogue: tuple[Step, ...],
    plan: FunctionPlan,
    spelling: Spelling,
) -> list[cst.BaseStatement]:
    rewriter = ReturnRewriter(spelling, epilogue, local_names(node))
    rewritten = [stmt.visit(rewriter) for stmt in body]
    flat: list[cst.BaseStatement] = []
    for stmt in rewritten:
        flat.extend(stmt.nodes if isinstance(stmt, cst.FlattenSentinel) else [stmt])  # type: ignore[arg-type]
    if not always_returns(flat):
        flat += guarded_statements(spelling, epilogue)
    return flat


def wrap_with(items: list[str], inner: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """``inner`` inside ``with <items>:`` (one line, or one item a line when that is too long)."""
    if not items:
        return inner
    with_node = parse_statement(with_text(items))
    assert isinstance(with_node, cst.With)
    return [with_node.with_changes(body=cst.IndentedBlock(body=inner))]
