"""Statements that share a line, on the text path, printed as :mod:`codegen.rewrite.callsites` prints them.

libcst holds the ``;``-separated statements of a line in one ``SimpleStatementLine``, and those of a one-line block
(``if c: y = f(x)``) in a ``SimpleStatementSuite``. ``callsites`` splits such a line where a step or a stream goes
between or around its statements: each on a line of its own at the block's indentation, the first keeping the
line's leading lines, the last the end of the line (its comment too), the others ending with the module's newline.
A one-line block that changes becomes an indented block: its header ends at the colon, the statements go one level
deeper and end with the module's newline (what followed them on the line, a comment too, is dropped, as libcst's new
block has a header of its own). A statement over several lines or after a ``;`` that ends a line is Unsupported.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.rewrite.textlines import Line, Lines, Unsupported, cut, indentation

__all__ = ["block_base", "one_line", "opened", "piece", "same_line", "trailing", "whole"]

_OPENERS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.ExceptHandler)


def one_line(src: Lines, stmts: Sequence[ast.stmt]) -> bool:
    """Whether ``stmts`` are a one-line block (after the ``:`` of their header)."""
    first = stmts[0]
    return bool(cut(src.at(first.lineno), 0, first.col_offset).strip(" \t\f"))


def block_base(src: Lines, owner: ast.AST) -> str:
    """The indentation of the header of ``owner``'s one-line block: the line that opens ``owner`` (an ``else`` is at
    its ``if``'s); libcst indents the block it makes of it one level deeper. A function's, a class's or a ``case``'s
    is Unsupported (a function's first steps, a ``case`` without a line of its own)."""
    if not isinstance(owner, _OPENERS):
        raise Unsupported("a one-line block of a definition or a case")
    return indentation(src.at(owner.lineno))


def same_line(stmts: Sequence[ast.stmt]) -> list[list[ast.stmt]]:
    """``stmts`` in runs of those that share a line (the ``;``-separated statements of one line)."""
    runs: list[list[ast.stmt]] = []
    for stmt in stmts:
        if runs and (runs[-1][-1].end_lineno or runs[-1][-1].lineno) == stmt.lineno:
            runs[-1].append(stmt)
        else:
            runs.append([stmt])
    return runs


def trailing(src: Lines, stmts: Sequence[ast.stmt]) -> str:
    """The end of the line after the last of ``stmts``, each on that one line: its comment and its newline."""
    if any(stmt.end_lineno != stmts[0].lineno for stmt in stmts):
        raise Unsupported("a statement over several lines next to another")
    last = stmts[-1]
    rest = cut(src.at(last.lineno), last.end_col_offset or 0)
    if rest.strip() and not rest.strip().startswith("#"):
        raise Unsupported("a ';' ending a line")
    return rest


def piece(src: Lines, stmt: ast.stmt, at: str, end: str) -> Line:
    """``stmt`` alone on a line of the block indented by ``at``, ended by ``end``."""
    return (at + src.segment(stmt) + end, True)


def whole(src: Lines, stmts: Sequence[ast.stmt], at: str, end: str) -> Line:
    """The statements of a one-line block, as they are written, on a line of the block indented by ``at``."""
    line = src.at(stmts[0].lineno)
    return (at + cut(line, stmts[0].col_offset, stmts[-1].end_col_offset) + end, True)


def opened(src: Lines, stmts: Sequence[ast.stmt], at: str, newline: str) -> Line:
    """The line of a one-line block's header, ended at its ``:`` (``at``: the indentation of the header's block)."""
    n = stmts[0].lineno
    head = cut(src.at(n), 0, stmts[0].col_offset).rstrip(" \t\f")
    if not head.endswith(":"):
        raise Unsupported("a one-line block after a backslash")
    return (head + newline, src.flagged(n, n, at)[0][1])
