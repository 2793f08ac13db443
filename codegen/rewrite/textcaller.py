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
from codegen.rewrite.textjoined import block_base, one_line, opened, piece, same_line, trailing, whole
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
        A one-line block that changes comes with its header's line (``textjoined``).

        The target is asked for each text in the order ``callsites`` asks (it remembers what the code
        needs in that order: its helpers, its streams)."""
        suite = one_line(self.src, stmts)
        base = block_base(self.src, owner) if suite else indentation(self.src.at(stmts[0].lineno))
        at = base + self.style.indent if suite else base
        items, changed, first_items, first_touched, head = self._items(stmts, at, suite)
        end = self.spelled("end", owner, field)
        items += [Gen(tuple(end))] if end else []
        first = start() if start is not None else []
        if first:
            if first_touched and docstring(head):
                raise Unsupported("a step around a docstring")
            items.insert(first_items if docstring(head) else 0, Gen(tuple(first)))
        if not changed and not end and not first:
            return None
        if suite:
            trailing(self.src, stmts)  # on one line, no ';' ending it
        alone(self.src, [run[0] for run in same_line(stmts) if len(run) == 1 and not suite])
        _no_user_with_by_wrap(items)
        lines = printed(merged(items, at, self.style.indent), at, self.style)
        return [opened(self.src, stmts, base, self.style.newline), *lines] if suite else lines

    def _items(self, stmts: list[ast.stmt], at: str, suite: bool) -> tuple[list[Item], bool, int, bool, ast.stmt]:
        """The items of the block's statements in the order the plan issues them (``textmoved``), whether any
        changed, how many items the first one made, whether it changed, and which it is."""
        ordered = moved_order(self._placed(stmts, suite), self.plan.moves, self.carried)
        if not ordered:
            raise Unsupported("every statement of a block moved out")
        items: list[Item] = []
        changed = [stmt for stmt, _ in ordered] != stmts
        first_items, first_touched = 0, False
        for run in _runs(ordered, suite):
            stmt, lead = run[0]
            inserted = not any(stmt is s for s in stmts)
            if inserted:
                alone(self.src, [stmt])
            if len(run) > 1 or suite:
                stmt_items, touched = self._joined(run, at, suite)
            else:
                stmt_items, touched = self.statement(stmt, lead, at if inserted else None)
            changed = changed or touched
            items += stmt_items
            if not first_items:
                first_items, first_touched = len(stmt_items), touched
        return items, changed, first_items, first_touched, ordered[0][0]

    def _placed(self, stmts: list[ast.stmt], suite: bool) -> list[Placed]:
        """Each statement with the blank and comment lines above it, flagged at its indentation (none in a
        one-line block)."""
        placed: list[Placed] = []
        floor = stmts[0].lineno if suite else 0
        for stmt in stmts:
            at = indentation(self.src.at(stmt.lineno))
            placed.append((stmt, self.src.flagged(lead_start(self.src, stmt, floor), first_line(stmt) - 1, at)))
            floor = end_of(self.src, stmt)
        return placed

    def _joined(self, run: list[Placed], at: str, suite: bool) -> tuple[list[Item], bool]:
        """The items of statements that share a line (``;``, or a one-line block), as ``callsites.line`` makes them:
        the line as it is where nothing goes between or around them, else one line each (``textjoined``)."""
        stmts, lead = [stmt for stmt, _ in run], run[0][1]
        if any(stmt in self.plan.moves or stmt in self.plan.moves.values() for stmt in stmts):
            raise Unsupported("a moved statement next to another on its line")
        if any(edited_lines(self.src, self.plan, stmt, at) is not None for stmt in stmts):
            raise Unsupported("an edited statement next to another on its line")
        steps = [(self.spelled("before", stmt), self.spelled("after", stmt)) for stmt in stmts]
        if not any(b or a or stmt in self.plan.wraps for stmt, (b, a) in zip(stmts, steps)):
            last = stmts[-1].end_lineno or stmts[-1].lineno
            kept = (
                [whole(self.src, stmts, at, self.style.newline)]
                if suite
                else self.src.flagged(stmts[0].lineno, last, at)
            )
            unchanged: list[Item] = [lead, kept] if lead else [kept]
            return unchanged, False
        end = self.style.newline if suite else trailing(self.src, stmts)
        items: list[Item] = []
        for i, (stmt, (before, after)) in enumerate(zip(stmts, steps)):
            main = [piece(self.src, stmt, at, end if i == len(stmts) - 1 else self.style.newline)]
            own = lead if i == 0 else []
            items += [own] if own else []
            items += [Gen(tuple(before))] if before else []
            items.append(self.wrapped(stmt, main, at, bool(own) and not before) or main)
            items += [Gen(tuple(after))] if after else []
        return items, True

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


def _runs(ordered: list[Placed], suite: bool) -> list[list[Placed]]:
    """The statements in runs of those that share a line; a one-line block's are one run."""
    if suite:
        return [ordered]
    leads = {id(stmt): lead for stmt, lead in ordered}
    return [[(stmt, leads[id(stmt)]) for stmt in run] for run in same_line([stmt for stmt, _ in ordered])]


def _single_with(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.With, ast.AsyncWith)) and len(stmt.items) == 1


def _no_user_with_by_wrap(items: list[Item]) -> None:
    for a, b in zip(items, items[1:]):
        if (isinstance(a, Wrap) and isinstance(b, _UserWith)) or (isinstance(a, _UserWith) and isinstance(b, Wrap)):
            raise Unsupported("a wrap next to the user's own 'with'")


def _is_simple(stmt: ast.stmt) -> bool:
    return not hasattr(stmt, "body") and not isinstance(stmt, ast.Match)
