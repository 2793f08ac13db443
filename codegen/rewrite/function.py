"""Apply one function's plan: contexts around the body, prologue, epilogue at every return, fork and join."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from codegen.plan import FunctionPlan
from codegen.rewrite.build import guarded_statements, parse_statement, statements, with_items_text
from codegen.rewrite.returns import ReturnRewriter, always_returns, contains_return, local_names
from codegen.targets.base import Target, entry_lines, for_function

__all__ = ["rewrite_body"]

_DOCSTRING = m.SimpleStatementLine(body=[m.Expr(m.SimpleString() | m.ConcatenatedString())])
_MAX_WITH_LINE = 88


def rewrite_body(node: cst.FunctionDef, plan: FunctionPlan, target: Target) -> cst.FunctionDef:
    """``node`` with its body rewritten by ``plan`` (decorators are the caller's business)."""
    target = for_function(target, plan)
    body = _statements(node.body)
    docstring = body[:1] if body and m.matches(body[0], _DOCSTRING) else []
    body = body[len(docstring):]
    if plan.epilogue:
        body = _with_epilogue(node, body, plan, target)
    inner = guarded_statements(target, plan.prologue) + body
    items = with_items_text(target, plan.contexts)
    joins_itself = plan.self_join is not None and guarded_statements(target, [plan.self_join])
    outer = _join_itself(plan, target, inner, items) if joins_itself else _wrap(items, inner)
    new_body = [*docstring, *statements(entry_lines(target, plan)), *guarded_statements(target, plan.before), *outer]
    return node.with_changes(body=cst.IndentedBlock(body=new_body, header=_header(node)))


def _statements(body: cst.BaseSuite) -> list[cst.BaseStatement]:
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    return [cst.SimpleStatementLine(body=list(body.body))]  # type: ignore[attr-defined]


def _header(node: cst.FunctionDef) -> cst.TrailingWhitespace:
    if isinstance(node.body, cst.IndentedBlock):
        return node.body.header
    return cst.TrailingWhitespace()


def _with_epilogue(node: cst.FunctionDef, body: list[cst.BaseStatement], plan: FunctionPlan,
                   target: Target) -> list[cst.BaseStatement]:
    rewriter = ReturnRewriter(target, plan.epilogue, local_names(node))
    body = [stmt.visit(rewriter) for stmt in body]  # type: ignore[misc]
    flat: list[cst.BaseStatement] = []
    for stmt in body:
        flat.extend(stmt.nodes if isinstance(stmt, cst.FlattenSentinel) else [stmt])  # type: ignore[arg-type]
    if not always_returns(flat):
        flat += guarded_statements(target, plan.epilogue)
    return flat


def _wrap(items: list[str], inner: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    if not items:
        return inner
    one_line = f"with {', '.join(items)}:\n    pass\n"
    if len(one_line.splitlines()[0]) + 8 > _MAX_WITH_LINE and len(items) > 1:
        one_line = "with (\n" + "".join(f"    {item},\n" for item in items) + "):\n    pass\n"
    with_node = parse_statement(one_line)
    assert isinstance(with_node, cst.With)
    return [with_node.with_changes(body=cst.IndentedBlock(body=inner))]


def _join_itself(plan: FunctionPlan, target: Target, inner: list[cst.BaseStatement],
                 items: list[str]) -> list[cst.BaseStatement]:
    """No call site waits for this function, so it waits for its own stream before returning."""
    assert plan.self_join is not None
    join = guarded_statements(target, [plan.self_join])
    last_returns = bool(inner) and m.matches(inner[-1], m.SimpleStatementLine(body=[m.Return()]))
    head = inner[:-1] if last_returns else inner
    if not any(contains_return(stmt) for stmt in head):
        return [*_wrap(items, head), *join, *inner[len(head):]]
    body = cst.IndentedBlock(body=_wrap(items, inner))
    return [cst.Try(body=body, finalbody=cst.Finally(body=cst.IndentedBlock(body=join)))]

