"""Positions of ``ast`` nodes as 1-based line and character column."""

from __future__ import annotations

import ast
import re

from codegen.frontend.ir import Loc

__all__ = ["Positions"]

# Python ends lines only at these; str.splitlines() also splits at form feeds and other separators.
_LINE_END = re.compile(r"\r\n|\r|\n")


class Positions:
    """Turns ``ast`` byte offsets into character columns (they differ on non-ASCII lines)."""

    def __init__(self, source: str) -> None:
        self._lines = _LINE_END.split(source)

    def loc(self, node: ast.AST) -> Loc:
        line = getattr(node, "lineno", 1)
        offset = getattr(node, "col_offset", 0)
        text = self._lines[line - 1] if 0 < line <= len(self._lines) else ""
        if not text.isascii():
            offset = len(text.encode("utf-8")[:offset].decode("utf-8", errors="replace"))
        return Loc(line=line, col=offset + 1)
