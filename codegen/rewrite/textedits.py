"""A planned statement's own text edited in place: its call's hoisted arguments replaced by the names they were bound
to, or its first operand by the name a step bound it to (``split.py``), as libcst's rewrite replaces those nodes
(:mod:`codegen.rewrite.callsites`). What libcst would print otherwise (an argument over several lines, in
parentheses or after a comment) is Unsupported.
"""

from __future__ import annotations

import ast
import re

from codegen.lower.plan import CallerPlan
from codegen.rewrite.textlines import Line, Lines, Unsupported, cut, splice

__all__ = ["edited_lines"]


def edited_lines(src: Lines, plan: CallerPlan, stmt: ast.stmt, at: str) -> list[Line] | None:
    """The statement's lines with its planned call's hoisted arguments replaced by their names, or its first
    operand by the name a step bound it to (``split.py``)."""
    split = plan.splits.get(stmt)
    if split is not None:
        return _split(src, stmt, split, at)
    call = getattr(stmt, "value", None)
    if not isinstance(call, ast.Call) or call not in plan.calls:
        return None
    names = dict(plan.calls[call].hoisted)
    if not names:
        return None
    lines = src.flagged(stmt.lineno, stmt.end_lineno or stmt.lineno, at)
    for value, name in reversed(_hoisted(src, call, names)):
        if value.end_lineno != value.lineno:
            raise Unsupported("a hoisted argument over several lines")
        text, moves = lines[value.lineno - stmt.lineno]
        lines[value.lineno - stmt.lineno] = (splice(text, value.col_offset, value.end_col_offset or 0, name), moves)
    return lines


def _split(src: Lines, stmt: ast.stmt, name: str, at: str) -> list[Line]:
    """``return <first> + rest`` as ``return <name> + rest``: as libcst replaces the operand, with the
    parentheses around it, which the operand's ``ast`` span leaves out (so such a statement is libcst's)."""
    value = getattr(stmt, "value", None)
    if not isinstance(value, ast.BinOp):
        raise Unsupported("a split statement without a binary operation")
    first = value.left
    if first.end_lineno != first.lineno or (value.lineno, value.col_offset) != (first.lineno, first.col_offset):
        raise Unsupported("a first operand over several lines or in parentheses")
    lines = src.flagged(stmt.lineno, stmt.end_lineno or stmt.lineno, at)
    text, moves = lines[first.lineno - stmt.lineno]
    lines[first.lineno - stmt.lineno] = (splice(text, first.col_offset, first.end_col_offset or 0, name), moves)
    return lines


def _hoisted(src: Lines, call: ast.Call, names: dict[int | str, str]) -> list[tuple[ast.expr, str]]:
    """The argument values to replace, with their names, checking that nothing but the argument's own
    punctuation stands before each (libcst replaces a value with the parentheses around it)."""
    ordered: list[ast.expr | ast.keyword] = sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))
    found: list[tuple[ast.expr, str]] = []
    previous: ast.expr | ast.keyword = call.func
    position = 0
    for arg in ordered:
        slot: int | str
        if isinstance(arg, ast.keyword):
            slot, value = (arg.arg if arg.arg is not None else "**"), arg.value
            spelled = r"[A-Za-z_]\w*\s*=\s*" if arg.arg is not None else r"\*\*\s*"
        else:
            slot, position = position, position + 1
            value, spelled = (arg.value, r"\*\s*") if isinstance(arg, ast.Starred) else (arg, "")
        opening = r"\s*\(\s*" if previous is call.func else r"\s*,\s*"
        if slot in names:
            if not re.fullmatch(opening + spelled, _between(src, previous, value)):
                raise Unsupported("a hoisted argument in parentheses or after a comment")
            found.append((value, names[slot]))
        previous = arg
    return found


def _between(src: Lines, a: ast.expr | ast.keyword, b: ast.expr) -> str:
    """The text from the end of ``a`` to the start of ``b``."""
    end_line, end_col = a.end_lineno or a.lineno, a.end_col_offset or 0
    if end_line == b.lineno:
        return cut(src.at(end_line), end_col, b.col_offset)
    middle = "".join(src.span(end_line + 1, b.lineno - 1))
    return cut(src.at(end_line), end_col) + middle + cut(src.at(b.lineno), 0, b.col_offset)
