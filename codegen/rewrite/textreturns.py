"""The epilogue before each ``return`` of a decorated function, on its text (as ``returns.ReturnRewriter``).

A function's epilogue (its records, its kept outputs) must run on every way out, so it goes before each
``return`` of an indented block and, unless the body always returns, at its end. A step that reads the
returned value gets it by name: a plain name as it is, anything else bound first to a fresh name
(``out = <value>``; ``return out``). A returned tuple of expressions to bind one by one is Unsupported
(libcst's rewriter spells it otherwise).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.lower import naming
from codegen.lower.plan import Step
from codegen.rewrite.build import guarded_texts
from codegen.rewrite.returns import spells_values
from codegen.rewrite.segments import Style, first_line
from codegen.rewrite.textblocks import alone, compound, end_of, is_elif, lead_start, starts_line, suites
from codegen.rewrite.textitems import Gen, printed
from codegen.rewrite.textjoined import same_line
from codegen.rewrite.textlines import Line, Lines, Unsupported, cut, indentation, split_lines
from codegen.targets.base import Spelling, wants_values

__all__ = ["Returns", "always_returns"]


@attrs.define(eq=False)
class Returns:
    """Each ``return`` of an indented block: the epilogue before it (as ``returns.ReturnRewriter``)."""

    src: Lines
    spelling: Spelling
    style: Style
    epilogue: tuple[Step, ...]
    names: Callable[[], set[str]]
    taken: set[str] | None = None
    needs_values: bool = False

    def __attrs_post_init__(self) -> None:
        self.needs_values = any(wants_values(s) and spells_values(self.spelling, s) for s in self.epilogue)

    def block(self, stmts: list[ast.stmt], _owner: object = None, _field: str = "") -> list[Line] | None:
        if not stmts or not starts_line(self.src, stmts[0]):
            return None  # a one-line block: libcst's rewriter does not enter it
        out: list[Line] = []
        changed = False
        floor = 0
        for run in same_line(stmts):  # the ``;``-separated statements of a line print once
            stmt = run[0]
            at = indentation(self.src.at(stmt.lineno))
            start, end = lead_start(self.src, stmt, floor), end_of(self.src, run[-1])
            if len(run) > 1 and any(isinstance(s, ast.Return) for s in run):
                raise Unsupported("a return next to another statement on its line")
            new = self.statement(stmt, at) if len(run) == 1 else None
            changed = changed or new is not None
            out += (
                self.src.flagged(start, end, at)
                if new is None
                else self.src.flagged(start, first_line(stmt) - 1, at) + new
            )
            floor = end
        return out if changed else None

    def statement(self, stmt: ast.stmt, at: str) -> list[Line] | None:
        if isinstance(stmt, ast.Return):
            return self.returned(stmt, at)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not suites(self.src, stmt):
            return None
        return compound(self.src, stmt, at, self.block)

    def returned(self, stmt: ast.Return, at: str) -> list[Line] | None:
        alone(self.src, [stmt])
        name, values = self.bind(stmt.value)
        epilogue = guarded_texts(self.spelling, self.epilogue, values)
        if not epilogue:
            return None
        lines = self.src.flagged(stmt.lineno, stmt.end_lineno or stmt.lineno, at)
        steps = printed([Gen(tuple(epilogue))], at, self.style)
        if name is None:
            return steps + lines
        text = self.src.segment(stmt)
        value = text[len("return") :].lstrip(" \t\f")
        head = cut(self.src.at(stmt.lineno), 0, stmt.col_offset) + text[: len(text) - len(value)]
        tail = cut(self.src.at(stmt.end_lineno or stmt.lineno), stmt.end_col_offset or 0)
        assign = split_lines(f"{at}{name} = {value}{self.style.newline}")
        bound = list(zip(assign, [True, *(moves for _, moves in lines[1:])]))
        return bound + steps + [(head + name + tail, True)]

    def bind(self, value: ast.expr | None) -> tuple[str | None, tuple[str, ...]]:
        """The fresh name the value is bound to (None: kept), and the names the steps read."""
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return None, ()
        if isinstance(value, ast.Name):
            return None, (value.id,)
        if (
            isinstance(value, ast.Tuple)
            and self.needs_values
            and not any(isinstance(e, ast.Starred) for e in value.elts)
        ):
            if not all(isinstance(e, ast.Name) for e in value.elts):
                raise Unsupported("a returned tuple to bind element by element")
            return None, tuple(e.id for e in value.elts)  # type: ignore[attr-defined]
        if self.taken is None:
            self.taken = self.names()
        name = naming.fresh_name("out", self.taken)
        self.taken.add(name)
        return name, (name,)


def always_returns(src: Lines, body: list[ast.stmt]) -> bool:
    """``returns.always_returns`` of the libcst statements of ``body`` (a one-line block is not a list of them)."""
    if not body or not starts_line(src, body[0]):
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if (
        isinstance(last, ast.If)
        and last.orelse
        and not (len(last.orelse) == 1 and isinstance(last.orelse[0], ast.If) and is_elif(src, last.orelse[0]))
    ):
        return always_returns(src, last.body) and always_returns(src, last.orelse)
    return False
