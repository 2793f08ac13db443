"""Apply one stream function's plan: its ``join`` parameter, contexts around the body, prologue, epilogue at
every return, fork before, and the join on the caller's stream after (for callers that leave it to it)."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from codegen.plan import FunctionPlan, Step
from codegen.rewrite.build import guarded_statements, parse_statement, statements, with_items_text
from codegen.rewrite.returns import ReturnRewriter, always_returns, contains_return, local_names
from codegen.rewrite.walk import children, has_return
from codegen.targets.base import Spelling, wants_values

__all__ = ["add_join_parameter", "rewrite_body"]

_DOCSTRING = m.SimpleStatementLine(body=[m.Expr(m.SimpleString() | m.ConcatenatedString())])
_MAX_WITH_LINE = 88


def rewrite_body(node: cst.FunctionDef, plan: FunctionPlan, spelling: Spelling) -> cst.FunctionDef:
    """``node`` with its body rewritten by ``plan`` (decorators are the caller's business)."""
    body = _statements(node.body)
    docstring = body[:1] if body and m.matches(body[0], _DOCSTRING) else []
    body = body[len(docstring):]
    epilogue, finally_steps = _split_epilogue(plan, body)
    if epilogue:
        body = _with_epilogue(node, body, epilogue, plan, spelling)
    if finally_steps:
        body = [cst.Try(body=cst.IndentedBlock(body=body), finalbody=cst.Finally(
            body=cst.IndentedBlock(body=guarded_statements(spelling, finally_steps, (), plan.caller_var))))]
    inner = guarded_statements(spelling, plan.prologue, (), plan.caller_var) + body
    items = with_items_text(spelling, plan.contexts)
    join = guarded_statements(spelling, plan.self_join)
    outer = _join_itself(join, inner, items) if join else _wrap(items, inner)
    entry = guarded_statements(spelling, plan.entry) + statements(spelling.entry_lines(plan))
    new_body = [*docstring, *entry, *guarded_statements(spelling, plan.before), *outer]
    node = node.with_changes(body=cst.IndentedBlock(body=new_body, header=_header(node)))
    return add_join_parameter(node, plan.join_kw) if plan.join_kw else node


def add_join_parameter(node: cst.FunctionDef, name: str) -> cst.FunctionDef:
    """``def f(self, x, *, join=True)``: the keyword by which a caller that joins by itself says so."""
    params = node.params
    param = cst.Param(name=cst.Name(name), default=cst.Name("True"),
                      equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                            whitespace_after=cst.SimpleWhitespace("")))
    star = params.star_arg if not isinstance(params.star_arg, cst.MaybeSentinel) else cst.ParamStar()
    return node.with_changes(params=params.with_changes(star_arg=star, kwonly_params=[*params.kwonly_params, param]))


def _split_epilogue(plan: FunctionPlan, body: list[cst.BaseStatement]) -> tuple[tuple[Step, ...], tuple[Step, ...]]:
    """A ``return`` inside ``try`` with a ``finally`` runs the ``finally`` after it: the steps that need no
    returned value (records, the join's record) then move to a ``finally`` around the whole body."""
    if not any(_returns_through_finally(stmt) for stmt in body):
        return plan.epilogue, ()
    return (tuple(s for s in plan.epilogue if wants_values(s)),
            tuple(s for s in plan.epilogue if not wants_values(s)))


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


def _with_epilogue(node: cst.FunctionDef, body: list[cst.BaseStatement], epilogue: tuple[Step, ...],
                   plan: FunctionPlan, spelling: Spelling) -> list[cst.BaseStatement]:
    rewriter = ReturnRewriter(spelling, epilogue, local_names(node), plan.caller_var)
    rewritten = [stmt.visit(rewriter) for stmt in body]
    flat: list[cst.BaseStatement] = []
    for stmt in rewritten:
        flat.extend(stmt.nodes if isinstance(stmt, cst.FlattenSentinel) else [stmt])  # type: ignore[arg-type]
    if not always_returns(flat):
        flat += guarded_statements(spelling, epilogue, (), plan.caller_var)
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


def _join_itself(join: list[cst.BaseStatement], inner: list[cst.BaseStatement],
                 items: list[str]) -> list[cst.BaseStatement]:
    """The caller's stream waits for this function's stream before it returns (callers that join by
    themselves skip it): after the contexts, before the ``return``."""
    last_returns = bool(inner) and m.matches(inner[-1], m.SimpleStatementLine(body=[m.Return()]))
    head = inner[:-1] if last_returns else inner
    if not any(contains_return(stmt) for stmt in head):
        return [*_wrap(items, head), *join, *inner[len(head):]]
    body = cst.IndentedBlock(body=_wrap(items, inner))
    return [cst.Try(body=body, finalbody=cst.Finally(body=cst.IndentedBlock(body=join)))]
