"""A caller's plan applied to its text (as :mod:`codegen.rewrite.callsites` applies it to libcst nodes).

Steps go before and after statements and at the end of blocks, a planned call's hoisted
arguments become the names they were bound to, and a statement on another stream moves
one level deeper into its ``with``, and a call the plan moves up goes where it is issued
(:mod:`codegen.rewrite.textmoved`). Lines with several statements, one-line blocks that
get a step, and comments or parentheses around a hoisted argument are Unsupported.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.lower.plan import CallerPlan
from codegen.rewrite.build import guarded_texts, with_items_text
from codegen.rewrite.segments import Style, first_line
from codegen.rewrite.textblocks import alone, compound, docstring, end_of, lead_start
from codegen.rewrite.textedits import edited_lines
from codegen.rewrite.textitems import Gen, Item, Wrap, merged, printed
from codegen.rewrite.textlines import Line, Lines, Unsupported, indentation, shifted
from codegen.rewrite.textmoved import Placed, deeper, moved_order
from codegen.targets.base import Spelling

__all__ = ["CallerText"]


@attrs.define(eq=False)
class CallerText:
    src: Lines
    plan: CallerPlan
    spelling: Spelling
    style: Style
    carried: dict[ast.stmt, Placed] = attrs.Factory(dict)  # statements moved into a later block (``textmoved``)

    def spelled(self, kind: str, node: ast.AST, field: str = "") -> list[str]:
        return guarded_texts(self.spelling, self.plan.steps.get((kind, node, field), ()))

    def block(
        self, stmts: list[ast.stmt], owner: ast.AST, field: str, start: Callable[[], list[str]] | None = None
    ) -> list[Line] | None:
        """The block's new lines; None when nothing in it changes. ``start()`` goes first (after a docstring).

        The target is asked for each text in the order ``callsites`` asks (it remembers what the code
        needs in that order: its helpers, its streams)."""
        items, changed, first_items, first_touched, head = self._items(stmts)
        end = self.spelled("end", owner, field)
        items += [Gen(tuple(end))] if end else []
        first = start() if start is not None else []
        if first:
            if first_touched and docstring(head):
                raise Unsupported("a step around a docstring")
            items.insert(first_items if docstring(head) else 0, Gen(tuple(first)))
        if not changed and not end and not first:
            return None
        alone(self.src, stmts)
        _no_user_with_by_wrap(items)
        at = indentation(self.src.at(stmts[0].lineno))
        return printed(merged(items, at, self.style.indent), at, self.style)

    def _items(self, stmts: list[ast.stmt]) -> tuple[list[Item], bool, int, bool, ast.stmt]:
        """The items of the block's statements in the order the plan issues them (``textmoved``), whether any
        changed, how many items the first one made, whether it changed, and which it is."""
        ordered = moved_order(self._placed(stmts), self.plan.moves, self.carried)
        if not ordered:
            raise Unsupported("every statement of a block moved out")
        at = indentation(self.src.at(stmts[0].lineno))
        items: list[Item] = []
        changed = [stmt for stmt, _ in ordered] != stmts
        first_items, first_touched = 0, False
        for stmt, lead in ordered:
            inserted = not any(stmt is s for s in stmts)
            if inserted:
                alone(self.src, [stmt])
            stmt_items, touched = self.statement(stmt, lead, at if inserted else None)
            changed = changed or touched
            items += stmt_items
            if not first_items:
                first_items, first_touched = len(stmt_items), touched
        return items, changed, first_items, first_touched, ordered[0][0]

    def _placed(self, stmts: list[ast.stmt]) -> list[Placed]:
        """Each statement with the blank and comment lines above it, flagged at its indentation."""
        placed: list[Placed] = []
        floor = 0
        for stmt in stmts:
            at = indentation(self.src.at(stmt.lineno))
            placed.append((stmt, self.src.flagged(lead_start(self.src, stmt, floor), first_line(stmt) - 1, at)))
            floor = end_of(self.src, stmt)
        return placed

    def statement(self, stmt: ast.stmt, lead: list[Line], into: str | None = None) -> tuple[list[Item], bool]:
        """The items of ``stmt`` and whether it changed; ``into``: the indentation of a deeper block it moved to."""
        own = indentation(self.src.at(stmt.lineno))
        at = own if into is None else into
        lead = deeper(lead, own, at)
        before = self.spelled("before", stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not _is_simple(stmt):
            inner = compound(self.src, stmt, own, self.block)
            lines = inner if inner is not None else self.src.flagged(first_line(stmt), end_of(self.src, stmt), own)
            lines = deeper(lines, own, at)
            wrapped = self.wrapped(stmt, lines, at, bool(lead) and not before)
            main: Item = wrapped or (_UserWith(lines) if _single_with(stmt) else lines)
            touched = inner is not None or wrapped is not None
            after = self.spelled("after", stmt)
        else:
            after = self.spelled("after", stmt)
            edited = edited_lines(self.src, self.plan, stmt, own)
            main = edited if edited is not None else self.src.flagged(stmt.lineno, stmt.end_lineno or stmt.lineno, own)
            main = deeper(main, own, at)
            wrapped = self.wrapped(stmt, main, at, bool(lead) and not before)
            touched = edited is not None or wrapped is not None
            main = wrapped or main
        items: list[Item] = [lead] if lead else []
        items += [Gen(tuple(before))] if before else []
        items.append(main)
        items += [Gen(tuple(after))] if after else []
        return items, touched or bool(before or after)

    def wrapped(self, stmt: ast.stmt, lines: list[Line], at: str, lead: bool) -> Wrap | None:
        """``stmt`` (its ``lines``) on its stream, when the plan wraps it and the target spells the switch."""
        wrap = self.plan.wraps.get(stmt)
        if wrap is None:
            return None
        enter, leave = guarded_texts(self.spelling, wrap.enter), guarded_texts(self.spelling, wrap.leave)
        headers = with_items_text(self.spelling, (wrap.switch,))
        if not headers:
            return None
        body: list[Gen | list[Line]] = [Gen(tuple(enter)), shifted(lines, at, self.style.indent), Gen(tuple(leave))]
        return Wrap(items=(headers[0],), body=body, lead=lead)


class _UserWith(list):
    """The lines of the user's own one-item ``with``: libcst would merge a wrap into it if its item matched."""


def _single_with(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.With, ast.AsyncWith)) and len(stmt.items) == 1


def _no_user_with_by_wrap(items: list[Item]) -> None:
    for a, b in zip(items, items[1:]):
        if (isinstance(a, Wrap) and isinstance(b, _UserWith)) or (isinstance(a, _UserWith) and isinstance(b, Wrap)):
            raise Unsupported("a wrap next to the user's own 'with'")


def _is_simple(stmt: ast.stmt) -> bool:
    return not hasattr(stmt, "body") and not isinstance(stmt, ast.Match)
