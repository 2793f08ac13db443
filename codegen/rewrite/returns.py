"""Every ``return`` of a decorated body runs the epilogue first (keep_output, records, join)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from codegen.lower import naming
from codegen.lower.plan import Step
from codegen.rewrite.build import guarded_statements
from codegen.rewrite.walk import has_return, names_read
from codegen.targets.base import Spelling, wants_values

__all__ = ["ReturnRewriter", "always_returns", "contains_return", "local_names", "spells_values"]

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def local_names(node: cst.CSTNode) -> set[str]:
    """The names ``node`` reads or binds (``x.attr`` reads ``x`` only)."""
    return names_read(node)


def contains_return(node: cst.CSTNode) -> bool:
    """Whether ``node`` returns, not counting nested functions and classes."""
    return has_return(node)


def always_returns(body: Sequence[cst.BaseStatement]) -> bool:
    """True when control cannot fall off the end of ``body``."""
    if not body:
        return False
    last = body[-1]
    if m.matches(last, m.SimpleStatementLine(body=[m.ZeroOrMore(), m.OneOf(m.Return(), m.Raise())])):
        return True
    if isinstance(last, cst.If) and isinstance(last.orelse, cst.Else):
        return always_returns(last.body.body) and always_returns(last.orelse.body.body)  # type: ignore[union-attr]
    return False


def spells_values(spelling: Spelling, step: Step) -> bool:
    """Whether the target spells ``step`` with the returned values (GE keeps nothing alive, for one)."""
    probe = "__npudsl_value__"
    return any(probe in line for line in spelling.statements(step, (probe,)))


class ReturnRewriter(cst.CSTTransformer):
    """Rewrites ``return x`` into ``<epilogue>; return x``, binding ``x`` to a name when a step needs it."""

    def __init__(self, spelling: Spelling, epilogue: Sequence[Step], taken: set[str]) -> None:
        super().__init__()
        self.spelling = spelling
        self.epilogue = tuple(epilogue)
        self.taken = taken
        self.needs_values = any(wants_values(step) and spells_values(spelling, step) for step in epilogue)

    def on_visit(self, node: cst.CSTNode) -> bool:
        """Only statements hold a ``return`` line: expressions and simple statements are not entered."""
        if isinstance(node, (cst.BaseExpression, cst.BaseSmallStatement)):
            return False
        return super().on_visit(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def leave_SimpleStatementLine(
        self,
        original: cst.SimpleStatementLine,  # noqa: ANN201
        updated: cst.SimpleStatementLine,
    ):
        if not updated.body or not isinstance(updated.body[-1], cst.Return):
            return updated
        *head, ret = updated.body
        assert isinstance(ret, cst.Return)
        bindings, value, values = self._bind(ret.value)
        epilogue = guarded_statements(self.spelling, self.epilogue, values)
        if not epilogue:  # the target spells nothing here: keep the line as written
            return updated
        out: list[cst.BaseStatement] = [cst.SimpleStatementLine(body=head)] if head else []
        out += bindings + epilogue
        out.append(updated.with_changes(body=[ret.with_changes(value=value)], leading_lines=()))
        return cst.FlattenSentinel([out[0].with_changes(leading_lines=updated.leading_lines), *out[1:]])

    def _fresh(self) -> str:
        name = naming.fresh_name("out", self.taken)
        self.taken.add(name)
        return name

    def _bind(
        self, value: cst.BaseExpression | None
    ) -> tuple[list[cst.BaseStatement], cst.BaseExpression | None, tuple[str, ...]]:
        if value is None or m.matches(value, m.Name("None")):
            return [], value, ()
        if isinstance(value, cst.Name):
            return [], value, (value.value,)
        if isinstance(value, cst.Tuple) and self.needs_values:
            if any(isinstance(e, cst.StarredElement) for e in value.elements):
                return self._bind_whole(value)
            return self._bind_tuple(value)
        return self._bind_whole(value)

    def _bind_tuple(self, value: cst.Tuple) -> tuple[list[cst.BaseStatement], cst.BaseExpression, tuple[str, ...]]:
        bindings: list[cst.BaseStatement] = []
        elements, names = [], []
        for element in value.elements:
            expr = element.value
            if not isinstance(expr, cst.Name):
                name = self._fresh()
                bindings.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], expr)]))
                expr = cst.Name(name)
            elements.append(element.with_changes(value=expr))
            names.append(expr.value)
        return bindings, value.with_changes(elements=elements), tuple(names)

    def _bind_whole(
        self, value: cst.BaseExpression
    ) -> tuple[list[cst.BaseStatement], cst.BaseExpression, tuple[str, ...]]:
        name = self._fresh()
        assign = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])
        return [assign], cst.Name(name), (name,)
