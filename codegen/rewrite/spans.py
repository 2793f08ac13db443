"""The source text of each top-level statement, as libcst groups them, from the ``ast`` already parsed.

libcst makes one statement of ``a = 1; b = 2`` where ``ast`` makes two; nothing
else differs at the top level. Two ``ast`` statements belong to one libcst line
exactly when the second starts on the line where the first ends (only a
semicolon allows that). A backslash continuation after a semicolon splits one
libcst line over several lines; the group count then differs from libcst's and
the caller gets ``None``.
"""

from __future__ import annotations

import ast
import re

__all__ = ["top_level_texts"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # Python's line ends, not str.splitlines'


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno, *(d.lineno for d in decorators)])


def _groups(tree: ast.Module) -> list[tuple[int, int]]:
    """(first line, last line) of every libcst top-level statement, 1-based and inclusive."""
    groups: list[tuple[int, int]] = []
    for node in tree.body:
        first, last = _first_line(node), node.end_lineno or node.lineno
        if groups and first == groups[-1][1]:
            groups[-1] = (groups[-1][0], last)
        else:
            groups.append((first, last))
    return groups


def top_level_texts(source: str, tree: ast.Module, count: int) -> list[str] | None:
    """The lines of each of the ``count`` top-level statements of ``source`` (``tree`` is its ``ast``).

    Every name a statement reads or binds is spelled within its text. ``None`` when the
    grouping does not give ``count`` statements, and nothing can be said.
    """
    groups = _groups(tree)
    if len(groups) != count:
        return None
    lines = _LINE.findall(source)
    return ["".join(lines[first - 1:last]) for first, last in groups]
