"""A planned call on its stream: the statement inside the target's stream switch, and neighbours sharing one.

A wrap puts a statement inside ``with <switch>:`` between the wrap's first steps (a wait for the
caller's stream, say) and its last (a record for the join). Consecutive wraps on the same stream with
nothing between them share one ``with``; a ``with`` the user wrote is never merged into, because only the
items of the wraps made here (``headers``) are recognized.
"""

from __future__ import annotations

import ast

import attrs
import libcst as cst

from codegen.lower.plan import CallerPlan
from codegen.rewrite.build import guarded_statements, with_items_text
from codegen.rewrite.function import wrap_with
from codegen.targets.base import Spelling

__all__ = ["Wraps"]

_EMPTY = cst.Module(body=[])


@attrs.define(eq=False)
class Wraps:
    """The wraps of one caller's plan, and the ``with`` items of those made so far."""

    plan: CallerPlan
    spelling: Spelling
    headers: set[str] = attrs.Factory(set)  # the ``with`` items of the wraps made here

    def wrapped(self, stmt: cst.SimpleStatementLine | cst.BaseCompoundStatement, node: ast.stmt) -> cst.BaseStatement:
        """``stmt`` on its stream: inside the wrap's ``with``, between its first and last steps."""
        wrap = self.plan.wraps.get(node)
        if wrap is None:
            return stmt
        inner = [
            *guarded_statements(self.spelling, wrap.enter),
            stmt.with_changes(leading_lines=()),
            *guarded_statements(self.spelling, wrap.leave),
        ]
        items = with_items_text(self.spelling, (wrap.switch,))
        if not items:
            return stmt
        self.headers.add(items[0])
        return wrap_with(items, inner)[0].with_changes(leading_lines=stmt.leading_lines)

    def merged(self, out: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """Consecutive wraps on the same stream, with no statement between them, share one ``with`` (blank and
        comment lines between them move inside it, above the statement they were above)."""
        merged: list[cst.BaseStatement] = []
        for stmt in out:
            last = merged[-1] if merged else None
            header = self._header(stmt)
            if isinstance(last, cst.With) and isinstance(stmt, cst.With) and header and self._header(last) == header:
                body = [*last.body.body, *_lead_inside(stmt)]
                merged[-1] = last.with_changes(body=last.body.with_changes(body=body))
            else:
                merged.append(stmt)
        return merged

    def _header(self, stmt: cst.BaseStatement) -> str | None:
        """The item of a ``with`` made for a wrap (None for any other statement, the user's ``with`` too)."""
        if not isinstance(stmt, cst.With) or len(stmt.items) != 1:
            return None
        text = _EMPTY.code_for_node(stmt.items[0].item)
        return text if text in self.headers else None


def _lead_inside(stmt: cst.With) -> list[cst.BaseStatement | cst.BaseSmallStatement]:
    """The body of a wrap's ``with``, the blank and comment lines above the ``with`` moved onto its first line."""
    first, *rest = stmt.body.body
    assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
    return [first.with_changes(leading_lines=[*stmt.leading_lines, *first.leading_lines]), *rest]
