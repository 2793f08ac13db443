"""Rewrite a planned top-level class or function on its text, as :class:`codegen.rewrite.module.ModuleRewriter`
would rewrite its libcst tree, or say it cannot (None: the unit goes through libcst).

The text path replaces line ranges: each npudsl decorator's lines (its end-of-line comment
kept on a line of its own), a caller's or a decorated function's body
(:mod:`codegen.rewrite.textcaller`, :mod:`codegen.rewrite.textbody`), the statements added
at the end of an ``__init__``, an ``__init__`` added to a class. Whatever it does not handle
raises ``Unsupported`` on the way.
"""

from __future__ import annotations

import ast
import re

import attrs

from codegen.frontend.collect import NpudslNames
from codegen.lower.plan import ModulePlan
from codegen.rewrite.astnames import names_read
from codegen.rewrite.build import guarded_texts, printed_at
from codegen.rewrite.module import constructing, init_text
from codegen.rewrite.segments import Style, Unit, first_line
from codegen.rewrite.textblocks import end_of, lead_start, owners, starts_line, suites
from codegen.rewrite.textbody import body_lines
from codegen.rewrite.textcaller import CallerText
from codegen.rewrite.textlines import Lines, Unsupported, cut, indentation, split_lines
from codegen.targets.base import Spelling

__all__ = ["rewrite_unit"]

_AT = re.compile(r"[ \t\f]*@[ \t\f]*")
Edit = tuple[int, int, list[str]]  # lines first to last (last = first - 1: an insertion) replaced by these
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
        edits = _Unit(src, plan, spelling, names, style).top(node)
    except Unsupported:
        return None
    if any(end > last for _, end, _ in edits):
        return None  # a footer the unit's cut (``segments``) left to the next statement
    out: list[str] = []
    at = unit.first
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
    names: NpudslNames
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
        edits = self.strip(node)
        methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not (self._inside(node.name) or any(self._strips(s) for s in methods)):
            return edits + self._init(node)
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                edits += self.function(stmt, f"{node.name}.{stmt.name}")
            elif isinstance(stmt, ast.ClassDef) or suites(self.src, stmt):
                raise Unsupported("a class or a block inside a class to rewrite")
        return edits + self._init(node)

    def _init(self, node: ast.ClassDef) -> list[Edit]:
        """``ModuleRewriter._with_init``: an ``__init__`` after the docstring and the class-level assignments,
        one blank line above it (and above the statement after it, whose blank lines go unless it has
        comments above it)."""
        if node.name not in self.constructing:
            return []
        lines = self.spelling.construct_lines()  # asked only here, as libcst's rewriter asks (it is told a need)
        if not lines or not starts_line(self.src, node.body[0]):
            return []
        if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__" for s in node.body):
            return []
        if not all(_spelling(d) in self.names.spellings for d in node.decorator_list):
            return []
        if any(isinstance(b, ast.Name) and b.id in self.constructing for b in node.bases):
            return []
        at = next((i for i, s in enumerate(node.body) if suites(self.src, s)), len(node.body))
        indent, newline = indentation(self.src.at(node.body[0].lineno)), self.style.newline
        init = [newline] if at else []
        init += printed_at(init_text(lines), indent, self.style.indent, newline)
        if at == len(node.body):
            end = end_of(self.src, node.body[-1])
            return [(end + 1, end, init)]
        floor = end_of(self.src, node.body[at - 1]) if at else 0
        first, stmt = lead_start(self.src, node.body[at], floor), first_line(node.body[at])
        above = self.src.span(first, stmt - 1)
        going = self._all_stripped(node.body[at])  # their comments join the lines above the definition
        gaps = [((a.end_lineno or a.lineno) + 1, b.lineno - 1) for a, b in zip(going, going[1:])]
        moved = [self.src.at(n) for a, b in gaps for n in range(a, b + 1)]
        moved += [cut(self.src.at(d.end_lineno or d.lineno), d.end_col_offset or 0) for d in going]
        if any(line.strip().startswith("#") for line in [*above, *moved]):
            return [(first, stmt - 1, [*init, newline, *above])]
        return [(first, stmt - 1, [*init, newline]), *((a, b, []) for a, b in gaps)]  # the blank lines go

    def _all_stripped(self, node: ast.stmt) -> list[ast.expr]:
        """``node``'s decorators if every one of them goes, else none."""
        found: list[ast.expr] = getattr(node, "decorator_list", [])
        return found if all(_spelling(d) in self.names.spellings for d in found) else []

    def _strips(self, decorated: _Definition | list[ast.expr]) -> bool:
        found = decorated if isinstance(decorated, list) else decorated.decorator_list
        return any(_spelling(d) in self.names.spellings for d in found)

    def function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> list[Edit]:
        if self._inside(qualname):
            raise Unsupported("a planned function inside a function")
        caller, own = self.plan.callers.get(qualname), self.plan.functions.get(qualname)
        init = qualname.endswith(".__init__") and qualname.split(".")[0] in self.constructing
        if (caller is not None) + (own is not None) + init > 1:
            raise Unsupported("two kinds of plan on one function")
        edits = self.strip(fn)
        start, end = lead_start(self.src, fn.body[0], 0), end_of(self.src, fn.body[-1])
        if caller is not None:

            def first() -> list[str]:  # asked after the body's steps, as ``callsites.apply_caller_plan`` asks
                texts = guarded_texts(self.spelling, caller.start)
                if texts:
                    self._fresh_block(fn)
                return texts

            new = CallerText(self.src, caller, self.spelling, self.style).block(fn.body, fn, "body", start=first)
            edits += [(start, end, [line for line, _ in new])] if new is not None else []
        elif own is not None:
            new = body_lines(self.src, fn, own, self.spelling, self.style, lambda: names_read(fn))
            edits.append((start, end, [line for line, _ in new]))
        elif init:
            texts = self.spelling.construct_lines()  # asked even for a one-line body, as libcst's rewriter asks
            at = indentation(self.src.at(fn.body[0].lineno))
            style = (self.style.indent, self.style.newline)
            added = [line for text in texts for line in printed_at(text.rstrip("\n") + "\n", at, *style)]
            edits += [(end + 1, end, added)] if starts_line(self.src, fn.body[0]) else []
        return edits

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

    def strip(self, node: _Definition) -> list[Edit]:
        """Each npudsl decorator's lines gone, the comment at its end on a line of its own."""
        edits: list[Edit] = []
        indent = indentation(self.src.at(node.lineno))
        for decorator in node.decorator_list:
            if _spelling(decorator) not in self.names.spellings:
                continue
            first, last = decorator.lineno, decorator.end_lineno or decorator.lineno
            if not _AT.fullmatch(cut(self.src.at(first), 0, decorator.col_offset)):
                raise Unsupported("a decorator not alone on its line")
            rest = cut(self.src.at(last), decorator.end_col_offset or 0).rstrip("\r\n").lstrip(" \t\f")
            if rest and not rest.startswith("#"):
                raise Unsupported("a decorator followed by code")
            edits.append((first, last, [indent + rest + self.style.newline] if rest else []))
        return edits


def _spelling(node: ast.expr) -> str | None:
    """``a.b.c`` for a decorator ``@a.b.c`` or ``@a.b.c(...)``, as ``names.resolve.cst_spelling`` spells it."""
    target = node.func if isinstance(node, ast.Call) else node
    parts: list[str] = []
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    return ".".join([target.id, *parts[::-1]]) if isinstance(target, ast.Name) else None
