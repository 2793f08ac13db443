"""The blocks of a function on its text: where each statement's lines are, which lines libcst gives each block.

libcst gives a statement the blank and comment lines right above it (its leading lines), and
a block the blank and comment lines after its last statement up to the last one that starts
with the block's indentation (its footer; :func:`owners`). A line moves with its block when it starts
with the indentation of the block that owns it (``textlines``). What a rewritten block holds and how
it prints is ``textitems``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from codegen.rewrite.segments import first_line
from codegen.rewrite.textlines import Line, Lines, Unsupported, cut, indentation

__all__ = [
    "alone",
    "blocks_of",
    "compound",
    "docstring",
    "end_of",
    "is_elif",
    "lead_start",
    "owners",
    "region",
    "starts_line",
    "suites",
]

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
Block = tuple[list[ast.stmt], ast.AST, str]  # statements, the node that owns them, its field


def starts_line(src: Lines, stmt: ast.stmt) -> bool:
    """Whether ``stmt`` begins its line (not after ``:`` of a one-line block or a ``;``)."""
    line = src.at(stmt.lineno)
    return not cut(line, 0, stmt.col_offset).strip(" \t\f")


def alone(src: Lines, stmts: Sequence[ast.stmt]) -> None:
    """Every statement on lines of its own, nothing after it but a comment: else Unsupported."""
    for stmt in stmts:
        if not starts_line(src, stmt):
            raise Unsupported("a statement after ':' or ';'")
        end = stmt.end_lineno or stmt.lineno
        rest = cut(src.at(end), stmt.end_col_offset or 0).strip()
        if rest and not rest.startswith("#"):
            raise Unsupported("a ';' after a statement")


def is_elif(src: Lines, node: ast.stmt) -> bool:
    return cut(src.at(node.lineno), node.col_offset).startswith("elif")


def blocks_of(src: Lines, node: ast.stmt) -> list[Block]:
    """The blocks of a compound statement in the order of the text (an ``elif``'s own blocks in its place)."""
    if isinstance(node, _DEFINITIONS):
        return []  # nothing is placed inside a nested definition
    if isinstance(node, ast.Match):
        return [(case.body, case, "body") for case in node.cases]
    found: list[Block] = [(node.body, node, "body")] if hasattr(node, "body") else []
    if isinstance(node, (ast.Try, ast.TryStar)):
        found += [(h.body, h, "body") for h in node.handlers]
    orelse = getattr(node, "orelse", [])
    if isinstance(node, ast.If) and len(orelse) == 1 and isinstance(orelse[0], ast.If) and is_elif(src, orelse[0]):
        found += blocks_of(src, orelse[0])
    elif orelse:
        found.append((orelse, node, "orelse"))
    if getattr(node, "finalbody", None):
        found.append((node.finalbody, node, "finalbody"))  # type: ignore[attr-defined]
    return found


def suites(src: Lines, node: ast.stmt) -> list[Block]:
    """Every block of ``node`` in the order of the text, a definition's body too."""
    return [(node.body, node, "body")] if isinstance(node, _DEFINITIONS) else blocks_of(src, node)


def lead_start(src: Lines, stmt: ast.stmt, floor: int) -> int:
    """The first of the blank and comment lines right above ``stmt`` (below line ``floor``)."""
    n = first_line(stmt)
    while n - 1 > floor and src.blank_or_comment(n - 1):
        n -= 1
    return n


def owners(src: Lines, stmts: Sequence[ast.stmt], indent: str, owner: dict[int, str], floor: int) -> int:
    """Record in ``owner`` the indentation of the block owning each line of the block of ``stmts`` (indented by
    ``indent``, its header ending at ``floor``); the block's last line, its footer included."""
    end = floor
    for stmt in stmts:
        for n in range(lead_start(src, stmt, end), (stmt.end_lineno or stmt.lineno) + 1):
            owner[n] = indent
        end = stmt.end_lineno or stmt.lineno
        for sub, _, _ in suites(src, stmt):
            if starts_line(src, sub[0]):
                header = lead_start(src, sub[0], 0) - 1
                end = max(end, owners(src, sub, indentation(src.at(sub[0].lineno)), owner, header))
    last = _footer_end(src, end, indent)
    for n in range(end + 1, last + 1):
        owner[n] = indent
    return last


def _footer_end(src: Lines, end: int, indent: str) -> int:
    """The last of the blank and comment lines after line ``end`` that start with the block's ``indent``."""
    last = end
    n = end + 1
    while n <= len(src.lines) and src.blank_or_comment(n):
        if src.at(n).startswith(indent):  # a blank line indented as deep counts too (libcst's ``indent=True``)
            last = n
        n += 1
    return last


def region(src: Lines, stmts: Sequence[ast.stmt]) -> tuple[int, int]:
    """The lines a block's statements own: from the leading lines of the first to the end of the last
    (with the footers of its blocks); the block's own footer is not in it."""
    return lead_start(src, stmts[0], 0), end_of(src, stmts[-1])


def end_of(src: Lines, stmt: ast.stmt) -> int:
    """The last line of ``stmt``: for a compound one, the footer of its last block."""
    inner = suites(src, stmt)
    if not inner or not starts_line(src, inner[-1][0][0]):
        return stmt.end_lineno or stmt.lineno
    sub = inner[-1][0]
    return owners(src, sub, indentation(src.at(sub[0].lineno)), {}, lead_start(src, sub[0], 0) - 1)


def compound(
    src: Lines, node: ast.stmt, at: str, sub: Callable[[list[ast.stmt], ast.AST, str], list[Line] | None]
) -> list[Line] | None:
    """``node``'s lines with each block that ``sub`` rewrites (None: unchanged) replaced; None if none is. A one-line
    block's line is replaced whole: ``sub`` gives its header's line too."""
    out: list[Line] = []
    pos = first_line(node)
    for stmts, owner, field in blocks_of(src, node):
        new = sub(stmts, owner, field)
        if new is None:
            continue
        start, end = region(src, stmts) if starts_line(src, stmts[0]) else (stmts[0].lineno, stmts[0].lineno)
        out += src.flagged(pos, start - 1, at)
        out += new
        pos = end + 1
    if not out:
        return None
    _, end = region(src, [node])
    return out + src.flagged(pos, end, at)


def docstring(stmt: ast.stmt) -> bool:
    """A lone string, as libcst tells it; an f-string is Unsupported (libcst calls only ``"a" f"b"`` one)."""
    value = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(value, ast.JoinedStr):
        raise Unsupported("an f-string first in a body")
    return isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes))
