"""The ``__init__`` a class gains, or the statements its own ``__init__`` gains, on the unit's text.

A target that must construct something per instance (``Spelling.construct_lines``) adds it at the end of
the class's ``__init__``, or, for a class without one, adds an ``__init__`` as
``ModuleRewriter._with_init`` does: after the docstring and the class-level assignments, one blank line
above it (and above the statement after it, whose blank lines go unless it has comments above it).
"""

from __future__ import annotations

import ast

from codegen.rewrite.build import printed_at
from codegen.rewrite.module import init_text
from codegen.rewrite.segments import first_line
from codegen.rewrite.textblocks import end_of, lead_start, starts_line, suites
from codegen.rewrite.textlines import cut, indentation
from codegen.rewrite.textstrip import Edit, Stripper, spelling_of
from codegen.targets.base import Spelling

__all__ = ["added_init", "init_end"]


def added_init(node: ast.ClassDef, strip: Stripper, spelling: Spelling, constructing: set[str]) -> list[Edit]:
    """The edits that add an ``__init__`` to ``node`` (none when it needs none or has one)."""
    if node.name not in constructing:
        return []
    lines = spelling.construct_lines()  # asked only here, as libcst's rewriter asks (it is told a need)
    if not lines or not _takes_init(node, strip, constructing):
        return []
    src, style = strip.src, strip.style
    at = next((i for i, s in enumerate(node.body) if suites(src, s)), len(node.body))
    indent, newline = indentation(src.at(node.body[0].lineno)), style.newline
    init = [newline] if at else []
    init += printed_at(init_text(lines), indent, style.indent, newline)
    if at == len(node.body):
        end = end_of(src, node.body[-1])
        return [(end + 1, end, init)]
    return _before(node, at, init, strip)


def _takes_init(node: ast.ClassDef, strip: Stripper, constructing: set[str]) -> bool:
    """A class whose body starts a line, without its own ``__init__``, whose decorators all go, and whose bases
    do not construct (their ``__init__`` does)."""
    if not starts_line(strip.src, node.body[0]):
        return False
    if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__" for s in node.body):
        return False
    if not all(spelling_of(d) in strip.names.spellings for d in node.decorator_list):
        return False
    return not any(isinstance(b, ast.Name) and b.id in constructing for b in node.bases)


def _before(node: ast.ClassDef, at: int, init: list[str], strip: Stripper) -> list[Edit]:
    """``init`` before the class's ``at``-th statement, its comments kept and its blank lines gone."""
    src, newline = strip.src, strip.style.newline
    floor = end_of(src, node.body[at - 1]) if at else 0
    first, stmt = lead_start(src, node.body[at], floor), first_line(node.body[at])
    above = src.span(first, stmt - 1)
    going = strip.all_stripped(node.body[at])  # their comments join the lines above the definition
    gaps = [((a.end_lineno or a.lineno) + 1, b.lineno - 1) for a, b in zip(going, going[1:])]
    moved = [src.at(n) for a, b in gaps for n in range(a, b + 1)]
    moved += [cut(src.at(d.end_lineno or d.lineno), d.end_col_offset or 0) for d in going]
    if any(line.strip().startswith("#") for line in [*above, *moved]):
        return [(first, stmt - 1, [*init, newline, *above])]
    return [(first, stmt - 1, [*init, newline]), *((a, b, []) for a, b in gaps)]  # the blank lines go


def init_end(fn: ast.FunctionDef | ast.AsyncFunctionDef, strip: Stripper, spelling: Spelling) -> list[Edit]:
    """The construct lines at the end of a class's own ``__init__``."""
    texts = spelling.construct_lines()  # asked even for a one-line body, as libcst's rewriter asks
    src, style = strip.src, strip.style
    end = end_of(src, fn.body[-1])
    at = indentation(src.at(fn.body[0].lineno))
    added = [line for text in texts for line in printed_at(text.rstrip("\n") + "\n", at, style.indent, style.newline)]
    return [(end + 1, end, added)] if starts_line(src, fn.body[0]) else []
