"""Which npudsl decorators a unit's text loses, and the edits that remove their lines.

Each npudsl decorator goes with its lines; a comment at its end stays, on a line of its own at the
definition's indentation. A decorator that shares its line with code (``@a @b``, ``@on_stream(...) def``)
is Unsupported: the libcst path spells that case.
"""

from __future__ import annotations

import ast
import re

import attrs

from codegen.frontend.collect import NpudslNames
from codegen.rewrite.segments import Style
from codegen.rewrite.textlines import Lines, Unsupported, cut, indentation

__all__ = ["Edit", "Stripper", "spelling_of"]

_AT = re.compile(r"[ \t\f]*@[ \t\f]*")
Edit = tuple[int, int, list[str]]  # lines first to last (last = first - 1: an insertion) replaced by these
_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@attrs.frozen
class Stripper:
    """The npudsl decorators of one unit's text (``names``: how the module spells them)."""

    src: Lines
    names: NpudslNames
    style: Style

    def all_stripped(self, node: ast.stmt) -> list[ast.expr]:
        """``node``'s decorators if every one of them goes, else none."""
        found: list[ast.expr] = getattr(node, "decorator_list", [])
        return found if all(spelling_of(d) in self.names.spellings for d in found) else []

    def strips(self, decorated: _Definition | list[ast.expr]) -> bool:
        found = decorated if isinstance(decorated, list) else decorated.decorator_list
        return any(spelling_of(d) in self.names.spellings for d in found)

    def strip(self, node: _Definition) -> list[Edit]:
        """Each npudsl decorator's lines gone, the comment at its end on a line of its own."""
        edits: list[Edit] = []
        indent = indentation(self.src.at(node.lineno))
        for decorator in node.decorator_list:
            if spelling_of(decorator) not in self.names.spellings:
                continue
            first, last = decorator.lineno, decorator.end_lineno or decorator.lineno
            if not _AT.fullmatch(cut(self.src.at(first), 0, decorator.col_offset)):
                raise Unsupported("a decorator not alone on its line")
            rest = cut(self.src.at(last), decorator.end_col_offset or 0).rstrip("\r\n").lstrip(" \t\f")
            if rest and not rest.startswith("#"):
                raise Unsupported("a decorator followed by code")
            edits.append((first, last, [indent + rest + self.style.newline] if rest else []))
        return edits


def spelling_of(node: ast.expr) -> str | None:
    """``a.b.c`` for a decorator ``@a.b.c`` or ``@a.b.c(...)``, as ``names.resolve.cst_spelling`` spells it."""
    target = node.func if isinstance(node, ast.Call) else node
    parts: list[str] = []
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    return ".".join([target.id, *parts[::-1]]) if isinstance(target, ast.Name) else None
