"""Rewrite a planned top-level class or function on its text, as :class:`codegen.rewrite.module.ModuleRewriter`
would rewrite its libcst tree, or say it cannot (None: the unit goes through libcst).

The text path replaces line ranges: each npudsl decorator's lines (its end-of-line comment
kept on a line of its own), a caller's or a decorated function's body
(:mod:`codegen.rewrite.textcaller`, :mod:`codegen.rewrite.textbody`), the statements added
at the end of an ``__init__``, an ``__init__`` added to a class (:mod:`codegen.rewrite.textstrip`,
:mod:`codegen.rewrite.textinit`). Whatever it does not handle raises ``Unsupported`` on the way.
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.collect import NpudslNames
from codegen.lower.plan import CallerPlan, ModulePlan
from codegen.rewrite.astnames import names_read
from codegen.rewrite.build import guarded_texts
from codegen.rewrite.module import constructing
from codegen.rewrite.segments import Style, Unit
from codegen.rewrite.textblocks import end_of, lead_start, owners, starts_line, suites
from codegen.rewrite.textbody import body_lines
from codegen.rewrite.textcaller import CallerText
from codegen.rewrite.textinit import added_init, init_end
from codegen.rewrite.textlines import Line, Lines, Unsupported, indentation, split_lines
from codegen.rewrite.textstrip import Edit, Stripper
from codegen.targets.base import Spelling

__all__ = ["rewrite_unit"]

_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def rewrite_unit(
    unit: Unit, lines: list[str], plan: ModulePlan, spelling: Spelling, names: NpudslNames, style: Style
) -> str | None:
    """The unit's new text, or None when the text path does not handle it."""
    node = unit.node
    if len(unit.nodes) != 1 or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    last = unit.first + len(split_lines(unit.text)) - 1
    try:
        src = Lines.of(lines, [node], unit.first, last)
        edits = _Unit(src, plan, spelling, Stripper(src, names, style), style).top(node)
    except Unsupported:
        return None
    if any(end > last for _, end, _ in edits):
        return None  # a footer the unit's cut (``segments``) left to the next statement
    return _applied(src, edits, unit.first, last)


def _applied(src: Lines, edits: list[Edit], begin: int, last: int) -> str | None:
    """The lines ``begin`` to ``last`` with ``edits`` made (None: two edits overlap)."""
    out: list[str] = []
    at = begin
    for first, end, new in sorted(edits, key=lambda e: (e[0], e[1])):  # an insertion before a line's edit
        if first < at:
            return None  # edits that overlap: not expected, but never printed twice
        out += src.span(at, first - 1) + new
        at = end + 1
    return "".join(out + src.span(at, last))


@attrs.define(eq=False)
class _Unit:
    src: Lines
    plan: ModulePlan
    spelling: Spelling
    strip: Stripper
    style: Style
    planned: set[str] = attrs.Factory(set)
    constructing: set[str] = attrs.Factory(set)

    def __attrs_post_init__(self) -> None:
        self.planned = {*self.plan.functions, *self.plan.callers}
        self.constructing = constructing(self.plan)

    def top(self, node: _Definition) -> list[Edit]:
        if isinstance(node, ast.ClassDef):
            return self.cls(node)
        return self.function(node, node.name)

    def _inside(self, qualname: str) -> bool:
        return any(name.startswith(qualname + ".") for name in self.planned)

    def cls(self, node: ast.ClassDef) -> list[Edit]:
        edits = self.strip.strip(node)
        methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not (self._inside(node.name) or any(self.strip.strips(s) for s in methods)):
            return edits + added_init(node, self.strip, self.spelling, self.constructing)
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                edits += self.function(stmt, f"{node.name}.{stmt.name}")
            elif isinstance(stmt, ast.ClassDef) or suites(self.src, stmt):
                raise Unsupported("a class or a block inside a class to rewrite")
        return edits + added_init(node, self.strip, self.spelling, self.constructing)

    def function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> list[Edit]:
        if self._inside(qualname):
            raise Unsupported("a planned function inside a function")
        caller, own = self.plan.callers.get(qualname), self.plan.functions.get(qualname)
        init = qualname.endswith(".__init__") and qualname.split(".")[0] in self.constructing
        if (caller is not None) + (own is not None) + init > 1:
            raise Unsupported("two kinds of plan on one function")
        edits = self.strip.strip(fn)
        start, end = lead_start(self.src, fn.body[0], 0), end_of(self.src, fn.body[-1])
        if caller is not None:
            new = self._caller(fn, caller)
            edits += [(start, end, [line for line, _ in new])] if new is not None else []
        elif own is not None:
            new = body_lines(self.src, fn, own, self.spelling, self.style, lambda: names_read(fn))
            edits.append((start, end, [line for line, _ in new]))
        elif init:
            edits += init_end(fn, self.strip, self.spelling)
        return edits

    def _caller(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, caller: CallerPlan) -> list[Line] | None:
        """A caller's body with its plan applied (None: unchanged)."""

        def first() -> list[str]:  # asked after the body's steps, as ``callsites.apply_caller_plan`` asks
            texts = guarded_texts(self.spelling, caller.start)
            if texts:
                self._fresh_block(fn)
            return texts

        return CallerText(self.src, caller, self.spelling, self.style).block(fn.body, fn, "body", start=first)

    def _fresh_block(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """libcst makes a new block for a caller's first steps: its header, indentation and footer are the defaults."""
        body = fn.body
        if not starts_line(self.src, body[0]):
            raise Unsupported("a one-line body")
        at = indentation(self.src.at(body[0].lineno))
        header = lead_start(self.src, body[0], 0) - 1
        line = self.src.at(header)
        if (
            at != indentation(self.src.at(fn.lineno)) + self.style.indent
            or line != line.rstrip("\r\n") + self.style.newline
        ):
            raise Unsupported("a body libcst's new block would print otherwise")
        if not line.rstrip("\r\n").endswith(":") or owners(self.src, body, at, {}, header) != end_of(
            self.src, body[-1]
        ):
            raise Unsupported("a body libcst's new block would print otherwise")
