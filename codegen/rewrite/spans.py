"""Where each statement's text lies in the source, from the ``ast`` already parsed.

For top-level statements and the members of top-level classes. libcst makes one
statement of ``a = 1; b = 2`` where ``ast`` makes two; nothing else differs. Two
``ast`` statements belong to one libcst line exactly when the second starts on
the line where the first ends (only a semicolon allows that). A backslash
continuation after a semicolon splits one libcst line over several lines; the
counts then differ from libcst's and that block is left out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

import attrs
import libcst as cst

__all__ = ["Spans", "statement_spans"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # Python's line ends, not str.splitlines'
Group = tuple[int, int]  # first and last line, 1-based, inclusive


@attrs.frozen
class Spans:
    lines: list[str]
    top: list[Group]
    members: dict[int, list[Group]]  # index of a top-level class -> its members' groups

    def texts_by_id(self, module: cst.Module) -> dict[int, str]:
        """``id(statement) -> its source text`` for ``module`` (the libcst tree of the same source)."""
        if len(self.top) != len(module.body):
            return {}
        found: dict[int, str] = {}
        for i, (stmt, group) in enumerate(zip(module.body, self.top)):
            found[id(stmt)] = self._text(group)
            members = self.members.get(i)
            if members and isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock) \
                    and len(members) == len(stmt.body.body):
                found.update((id(member), self._text(g)) for member, g in zip(stmt.body.body, members))
        return found

    def _text(self, group: Group) -> str:
        return "".join(self.lines[group[0] - 1:group[1]])


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def _groups(body: Sequence[ast.stmt]) -> list[tuple[Group, ast.stmt]]:
    """Each libcst statement's lines, and its first ``ast`` statement (a class is always alone)."""
    groups: list[tuple[Group, ast.stmt]] = []
    for node in body:
        first, last = _first_line(node), node.end_lineno or node.lineno
        if groups and first == groups[-1][0][1]:
            groups[-1] = ((groups[-1][0][0], last), groups[-1][1])
        else:
            groups.append(((first, last), node))
    return groups


def statement_spans(source: str, tree: ast.Module) -> Spans:
    """The line groups of ``source``'s statements; every name a statement spells lies within its group."""
    top = _groups(tree.body)
    members = {i: [g for g, _ in _groups(node.body)] for i, (_, node) in enumerate(top)
               if isinstance(node, ast.ClassDef)}
    return Spans(lines=_LINE.findall(source), top=[g for g, _ in top], members=members)
