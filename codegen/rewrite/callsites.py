"""Apply a caller's plan: planned calls on their streams, steps before and after statements and at the end of
blocks, call edits.

The plan is keyed by the function's ``ast`` nodes; this walks the ``ast`` and the libcst statements
side by side (one libcst line holds each ``;``-separated ``ast`` statement, ``elif`` is an ``if`` in
both). A line with several statements is split where a step goes between them, and a one-line
block (``if c: y = f(x)``) becomes an indented one when a step goes into it. What changes inside a
statement is ``callsite_edits``; a statement on its stream is ``callsite_wraps``.
"""

from __future__ import annotations

import ast

import attrs
import libcst as cst

from codegen.lower.plan import CallerPlan
from codegen.rewrite.build import guarded_statements
from codegen.rewrite.callsite_edits import edited_statement
from codegen.rewrite.callsite_wraps import Wraps
from codegen.rewrite.moved import Pair, moved_order
from codegen.targets.base import Spelling

__all__ = ["apply_caller_plan"]

_Block = cst.IndentedBlock | cst.SimpleStatementSuite
_Piece = tuple[cst.BaseSmallStatement, ast.stmt, list[cst.BaseStatement], list[cst.BaseStatement]]


@attrs.define(eq=False)
class _Placer:
    plan: CallerPlan
    spelling: Spelling
    wraps: Wraps
    carried: dict[ast.stmt, Pair] = attrs.Factory(dict)  # statements moved into a later block (``moved.py``)

    def spelled(self, kind: str, node: ast.AST, field: str = "") -> list[cst.BaseStatement]:
        return guarded_statements(self.spelling, self.plan.steps.get((kind, node, field), ()))

    def block(self, suite: _Block, stmts: list[ast.stmt], owner: ast.AST, field: str) -> _Block:
        body = list(suite.body)
        if isinstance(suite, cst.SimpleStatementSuite):
            out = self.line(cst.SimpleStatementLine(body=body), stmts)
        else:
            out = self._statements(body, stmts)  # type: ignore[arg-type]
        out = self.wraps.merged(out + self.spelled("end", owner, field))
        if isinstance(suite, cst.SimpleStatementSuite):
            if len(out) == 1 and out[0] is not None and _unchanged_line(out[0], body):
                return suite
            return cst.IndentedBlock(body=out)
        return suite.with_changes(body=out)

    def _statements(self, body: list[cst.BaseStatement], stmts: list[ast.stmt]) -> list[cst.BaseStatement]:
        """Each libcst statement of an indented block with the ``ast`` statements it holds."""
        out: list[cst.BaseStatement] = []
        at = 0
        pairs: list[Pair] = []
        for stmt in body:
            count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
            pairs.append((stmt, stmts[at : at + count]))
            at += count
        for stmt, parts in moved_order(pairs, self.plan.moves, self.carried):
            out += (
                self.line(stmt, parts) if isinstance(stmt, cst.SimpleStatementLine) else self.compound(stmt, parts[0])  # type: ignore[arg-type]
            )
        return out

    def line(self, line: cst.SimpleStatementLine, parts: list[ast.stmt]) -> list[cst.BaseStatement]:
        pieces: list[_Piece] = [
            (small, node, self.spelled("before", node), self.spelled("after", node))
            for small, node in zip(line.body, parts)
        ]
        edited = [edited_statement(small, node, self.plan) for small, node, _, _ in pieces]
        if len(parts) == 1 and parts[0] in self.plan.wraps:
            single = line.with_changes(body=[edited[0].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
            return _lead(pieces[0][2], self.wraps.wrapped(single, parts[0])) + pieces[0][3]
        if not any(before or after or node in self.plan.wraps for _, node, before, after in pieces):
            if all(e is s for e, (s, _, _, _) in zip(edited, pieces)):
                return [line]
            return [line.with_changes(body=edited)]
        return self._split(line, parts, pieces, edited)

    def _split(
        self,
        line: cst.SimpleStatementLine,
        parts: list[ast.stmt],
        pieces: list[_Piece],
        edited: list[cst.BaseSmallStatement],
    ) -> list[cst.BaseStatement]:
        """One line per statement of ``line``, each with its steps before and after it (and its wrap)."""
        out: list[cst.BaseStatement] = []
        for i, ((_, _, before, after), small) in enumerate(zip(pieces, edited)):
            small = small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            kept = (
                line.with_changes(body=[small], leading_lines=())
                if i == len(pieces) - 1
                else cst.SimpleStatementLine(body=[small])
            )
            out += _lead(before, self.wraps.wrapped(kept if i else _first(kept, line), parts[i])) + after
        return out

    def compound(self, stmt: cst.BaseCompoundStatement, node: ast.stmt) -> list[cst.BaseStatement]:
        before = self.spelled("before", node)
        stmt = self.nested(stmt, node)
        return _lead(before, self.wraps.wrapped(stmt, node)) + self.spelled("after", node)

    def nested(self, stmt: cst.BaseCompoundStatement, node: ast.stmt) -> cst.BaseCompoundStatement:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return stmt
        if isinstance(stmt, cst.Match):
            return stmt.with_changes(
                cases=[
                    c.with_changes(body=self.block(c.body, a.body, a, "body")) for c, a in zip(stmt.cases, node.cases)
                ]
            )  # type: ignore[attr-defined]
        changes: dict[str, object] = {"body": self.block(stmt.body, node.body, node, "body")}  # type: ignore[attr-defined]
        if isinstance(stmt, (cst.If, cst.For, cst.While)) and stmt.orelse is not None:
            changes["orelse"] = self.orelse(stmt.orelse, node)
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            changes.update(self._try_parts(stmt, node))
        return stmt.with_changes(**changes)

    def _try_parts(self, stmt: cst.Try | cst.TryStar, node: ast.stmt) -> dict[str, object]:
        """The handlers, ``else`` and ``finally`` blocks of a ``try``, each with the plan applied."""
        changes: dict[str, object] = {
            "handlers": [
                h.with_changes(body=self.block(h.body, a.body, a, "body")) for h, a in zip(stmt.handlers, node.handlers)
            ]  # type: ignore[attr-defined]
        }
        if stmt.orelse is not None:
            changes["orelse"] = stmt.orelse.with_changes(
                body=self.block(stmt.orelse.body, node.orelse, node, "orelse")  # type: ignore[attr-defined]
            )
        if stmt.finalbody is not None:
            changes["finalbody"] = stmt.finalbody.with_changes(
                body=self.block(stmt.finalbody.body, node.finalbody, node, "finalbody")  # type: ignore[attr-defined]
            )
        return changes

    def orelse(self, orelse: cst.If | cst.Else, node: ast.stmt) -> cst.If | cst.Else:
        if isinstance(orelse, cst.If):
            return self.nested(orelse, node.orelse[0])  # type: ignore[attr-defined,return-value]
        return orelse.with_changes(body=self.block(orelse.body, node.orelse, node, "orelse"))  # type: ignore[attr-defined]


def _lead(before: list[cst.BaseStatement], stmt: cst.BaseStatement) -> list[cst.BaseStatement]:
    """``before`` then ``stmt``, the comments and blank lines above ``stmt`` moved above ``before``."""
    if not before:
        return [stmt]
    first = before[0].with_changes(leading_lines=stmt.leading_lines)
    return [first, *before[1:], stmt.with_changes(leading_lines=())]


def _first(kept: cst.SimpleStatementLine, line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    return kept.with_changes(leading_lines=line.leading_lines)


def _unchanged_line(out: cst.BaseStatement, body: list[cst.BaseSmallStatement]) -> bool:
    return (
        isinstance(out, cst.SimpleStatementLine)
        and len(out.body) == len(body)
        and all(a is b for a, b in zip(out.body, body))
    )


def apply_caller_plan(
    node: cst.FunctionDef, fn: ast.FunctionDef | ast.AsyncFunctionDef, plan: CallerPlan, spelling: Spelling
) -> cst.FunctionDef:
    """``node`` (the libcst twin of ``fn``) with ``plan`` applied."""
    placer = _Placer(plan=plan, spelling=spelling, wraps=Wraps(plan=plan, spelling=spelling))
    body = placer.block(node.body, fn.body, fn, "body")
    start = guarded_statements(spelling, plan.start)
    if start:
        stmts = list(body.body) if isinstance(body, cst.IndentedBlock) else [cst.SimpleStatementLine(list(body.body))]
        at = 1 if stmts and _is_docstring(stmts[0]) else 0
        body = cst.IndentedBlock(body=[*stmts[:at], *start, *stmts[at:]])
    return node.with_changes(body=body)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
