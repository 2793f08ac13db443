"""The source lines of a unit as libcst would print them when a rewrite moves or re-indents them.

The text rewrite (:mod:`codegen.rewrite.textunit`) edits a planned function's lines at their
``ast`` positions instead of parsing and printing them through libcst. libcst prints an
unchanged node's text as it was parsed, except that the indentation of a block is printed
from the blocks around it: a line it parsed as starting with its block's indentation
(a statement's first line, a comment line, a continuation line inside brackets) moves
with the block, while the inside of a multi-line string, or a line after a backslash
continuation (libcst holds it in the whitespace before the next token), does not.
:class:`Lines` knows those lines; anything it cannot tell as surely (a backslash after
a ``#``, strings joined across lines) raises :class:`Unsupported`, and the unit goes
through libcst.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable

import attrs

from codegen.index.children import unordered_walk

__all__ = ["Line", "Lines", "Unsupported", "cut", "indentation", "shifted", "splice", "split_lines"]

Line = tuple[str, bool]  # a printed line, and whether a deeper block moves it (see ``shifted``)
_QUOTES = ('"""', "'''")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # Python's line ends, not str.splitlines'


class Unsupported(Exception):
    """The text rewrite does not handle this construct: the unit is rewritten through libcst."""


@attrs.define(eq=False)
class Lines:
    """The module's lines (``lines[0]`` is line 1) and the lines inside the multi-line strings of a unit."""

    lines: list[str]
    interior: set[int] = attrs.Factory(set)
    owner: dict[int, str] = attrs.Factory(dict)  # the indentation of the block owning a line, where known
    joined: set[int] = attrs.Factory(set)  # the lines after a backslash continuation (libcst never moves them)

    @classmethod
    def of(cls, lines: list[str], nodes: Iterable[ast.AST], first: int, last: int) -> Lines:
        """The facts for the unit of ``nodes`` (lines ``first`` to ``last``); Unsupported where unsure."""
        found = cls(lines)
        text = "".join(lines[first - 1 : last])
        ended = [n for n in range(first, last + 1) if found.at(n).rstrip("\r\n").endswith("\\")]
        if ended or '"""' in text or "'''" in text:  # else no string spans lines
            for node in nodes:
                for sub in unordered_walk(node):
                    if isinstance(sub, (ast.Constant, ast.JoinedStr)) and (sub.end_lineno or 0) > sub.lineno:
                        found._string(sub)
        for n in ended:
            if n not in found.interior:
                found._continued(n)
        return found

    def _continued(self, n: int) -> None:
        """Line ``n`` ends with a backslash: libcst keeps the next line in the whitespace before its token, as
        written. A backslash after a ``#`` may end a comment instead (Unsupported: the text does not tell)."""
        if "#" in self.at(n):
            raise Unsupported("a backslash continuation after a '#'")
        self.joined.add(n + 1)

    def _string(self, node: ast.expr) -> None:
        text = self.segment(node)
        body = text.lstrip("rRbBfFuU")
        quote = body[:3]
        if quote not in _QUOTES or not body.endswith(quote) or text.count(quote) != 2:
            raise Unsupported("strings joined across lines")
        self.interior.update(range(node.lineno + 1, (node.end_lineno or node.lineno) + 1))

    def at(self, n: int) -> str:
        return self.lines[n - 1]

    def span(self, first: int, last: int) -> list[str]:
        return self.lines[first - 1 : last]

    def segment(self, node: ast.AST) -> str:
        """The text of ``node`` (``ast`` columns are UTF-8 byte offsets)."""
        first, last = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        if first == last:
            return cut(self.at(first), node.col_offset, node.end_col_offset)  # type: ignore[attr-defined]
        head = cut(self.at(first), node.col_offset)  # type: ignore[attr-defined]
        tail = cut(self.at(last), 0, node.end_col_offset)  # type: ignore[attr-defined]
        return head + "".join(self.span(first + 1, last - 1)) + tail

    def blank_or_comment(self, n: int) -> bool:
        text = self.at(n).strip()
        return n not in self.interior and (not text or text.startswith("#"))

    def flagged(self, first: int, last: int, indent: str) -> list[Line]:
        """Lines ``first`` to ``last``, each flagged as libcst parses it in a block indented by ``indent``."""
        return [
            (text, n not in self.interior and n not in self.joined and text.startswith(self.owner.get(n, indent)))
            for n, text in enumerate(self.span(first, last), first)
        ]


def cut(line: str, start: int, end: int | None = None) -> str:
    """``line`` between two UTF-8 byte offsets."""
    if line.isascii():
        return line[start:end]
    data = line.encode()
    return data[start:end].decode()


def splice(line: str, start: int, end: int, new: str) -> str:
    """``line`` with the text between two UTF-8 byte offsets replaced by ``new``."""
    if line.isascii():
        return line[:start] + new + line[end:]
    data = line.encode()
    return (data[:start] + new.encode() + data[end:]).decode()


@functools.lru_cache(maxsize=1024)
def indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t\f"))]


def shifted(lines: list[Line], base: str, extra: str) -> list[Line]:
    """``lines`` one block deeper: ``extra`` after ``base`` on every line libcst indents."""
    return [(base + extra + text[len(base) :], True) if moves else (text, False) for text, moves in lines]


def split_lines(text: str) -> list[str]:
    """``text`` cut at Python's line ends, each line keeping its end."""
    return _LINE.findall(text)
