"""Positions of ``ast`` nodes as 1-based line and character column."""

from __future__ import annotations

import ast
import functools
import re

from codegen.frontend.ir import Loc

__all__ = ["Positions"]

# Python ends lines only at these; str.splitlines() also splits at form feeds and other separators.
_LINE_END = re.compile(r"\r\n|\r|\n")


class Positions:
    """Turns ``ast`` byte offsets into character columns (they differ on non-ASCII lines).

    The source is split into lines at the first ``loc``: the index makes one for every module it
    searches for calls, and a module without any never asks.
    """

    def __init__(self, source: str) -> None:
        self._source = source

    @functools.cached_property
    def _lines(self) -> list[str]:
        return _LINE_END.split(self._source)

    def loc(self, node: ast.AST) -> Loc:
        line = getattr(node, "lineno", 1)
        offset = getattr(node, "col_offset", 0)
        lines = self._lines
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if not text.isascii():
            offset = len(text.encode("utf-8")[:offset].decode("utf-8", errors="replace"))
        return Loc(line=line, col=offset + 1)
