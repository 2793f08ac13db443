"""Columns are characters, on the line Python counts (form feeds and other separators do not end lines)."""

from __future__ import annotations

import ast

from codegen.frontend.positions import Positions


def _first_call(source: str) -> ast.Call:
    return next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call))


def test_non_ascii_text_before_the_node_counts_characters() -> None:
    source = 'x = "ünïcode"; f(1)\n'
    assert Positions(source).loc(_first_call(source)).col == source.index("f(") + 1


def test_a_form_feed_does_not_shift_the_line() -> None:
    source = '\x0c\ny = 1  # \x0c page break\nz = "é"; g(2)\n'
    loc = Positions(source).loc(_first_call(source))
    assert (loc.line, loc.col) == (3, 'z = "é"; g(2)'.index("g(") + 1)
