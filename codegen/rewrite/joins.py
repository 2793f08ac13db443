"""Join at the call site: the caller waits for a stream call just before the first statement that uses
its result, or that may return; a call inside a loop is joined by the end of that loop's body."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import libcst as cst
import libcst.matchers as m

from codegen.plan import JoinRule
from codegen.rewrite.build import guarded_statements
from codegen.rewrite.returns import contains_return, local_names
from codegen.targets.base import Target

__all__ = ["place_joins"]

_LOOPS = (cst.For, cst.While)


@attrs.frozen
class _Pending:
    names: frozenset[str]
    rule: JoinRule


@attrs.define(eq=False)
class _Placer:
    rules: Sequence[JoinRule]
    target: Target

    def block(self, stmts: Sequence[cst.BaseStatement]) -> tuple[list[cst.BaseStatement], list[_Pending]]:
        out: list[cst.BaseStatement] = []
        pending: list[_Pending] = []
        for stmt in stmts:
            ready = [p for p in pending if p.names & local_names(stmt) or contains_return(stmt)]
            pending = [p for p in pending if p not in ready]
            joins = self._waits(ready)
            if joins:
                joins[0] = joins[0].with_changes(leading_lines=stmt.leading_lines)
                stmt = stmt.with_changes(leading_lines=())
            out += joins
            stmt, inner = self.compound(stmt)
            out.append(stmt)
            pending += inner + self._started(stmt)
        return out, pending

    def compound(self, stmt: cst.BaseStatement) -> tuple[cst.BaseStatement, list[_Pending]]:
        """Place joins inside the blocks of a compound statement; return what is still pending after it."""
        if isinstance(stmt, cst.SimpleStatementLine) or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return stmt, []
        pending: list[_Pending] = []
        loop = isinstance(stmt, _LOOPS)

        class _Blocks(cst.CSTTransformer):
            def visit_IndentedBlock(inner, node: cst.IndentedBlock) -> bool:  # noqa: N805
                return False

            def leave_IndentedBlock(inner, original: cst.IndentedBlock,  # noqa: N805
                                    updated: cst.IndentedBlock) -> cst.IndentedBlock:
                body, rest = self.block(updated.body)
                if loop and original is stmt.body:  # type: ignore[attr-defined]
                    body += self._waits(rest)
                    rest = []
                pending.extend(rest)
                return updated.with_changes(body=body)

        return stmt.visit(_Blocks()), pending  # type: ignore[return-value]

    def _started(self, stmt: cst.BaseStatement) -> list[_Pending]:
        for rule in self.rules:
            call = m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name(rule.attr))) if rule.on_self \
                else m.Call(func=m.Name(rule.attr))
            names = _bound_names(stmt, call)
            if names is not None:
                return [_Pending(names=names, rule=rule)]
        return []

    def _waits(self, ready: Sequence[_Pending]) -> list[cst.BaseStatement]:
        unique = {p.rule.wait.event.var: p.rule.wait for p in ready}
        return guarded_statements(self.target, list(unique.values()))


def _bound_names(stmt: cst.BaseStatement, call: m.Call) -> frozenset[str] | None:
    """The names a plain ``x = call``, ``a, b = call`` or ``call`` statement binds; None if it is not one."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if m.matches(small, m.Expr(value=call)):
        return frozenset()
    if m.matches(small, m.Assign(targets=[m.AssignTarget()], value=call) | m.AnnAssign(value=call)):
        target = small.targets[0].target if isinstance(small, cst.Assign) else small.target  # type: ignore[union-attr]
        if isinstance(target, cst.Name):
            return frozenset({target.value})
        elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else []
        if elements and all(isinstance(e, cst.Name) for e in elements):
            return frozenset(e.value for e in elements)  # type: ignore[attr-defined]
    return None


def place_joins(body: Sequence[cst.BaseStatement], rules: Sequence[JoinRule],
                target: Target) -> list[cst.BaseStatement]:
    """``body`` with a join wait before each first use; joins still pending at the end close the body."""
    placer = _Placer(rules=rules, target=target)
    out, pending = placer.block(body)
    return out + placer._waits(pending)
