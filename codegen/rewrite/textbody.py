"""A decorated function's own plan applied to its text (as :mod:`codegen.rewrite.function` applies it to libcst).

Its core limit wraps the body (every line libcst indents moves one level deeper), its
``@after`` waits start it, and its epilogue runs before each ``return`` of an indented
block (the value bound to a fresh name when a step reads it) and at the end. A ``return``
inside ``try ... finally`` moves the steps that read no returned value to a ``finally``
around the body. libcst makes the body a new block: a footer comment would go, so it is
Unsupported, as are a returned tuple of expressions to bind one by one, and a function
that also calls stream functions.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.index.children import children
from codegen.lower import naming
from codegen.lower.plan import FunctionPlan, Step
from codegen.rewrite.build import guarded_texts, with_header_at, with_items_text
from codegen.rewrite.returns import spells_values
from codegen.rewrite.segments import Style, first_line
from codegen.rewrite.textblocks import (
    Gen,
    alone,
    compound,
    docstring,
    end_of,
    is_elif,
    lead_start,
    owners,
    printed,
    starts_line,
    suites,
)
from codegen.rewrite.textlines import Line, Lines, Unsupported, cut, indentation, shifted, split_lines
from codegen.targets.base import Spelling, wants_values

__all__ = ["body_lines"]

_NONE: tuple[Step, ...] = ()


def body_lines(
    src: Lines,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    plan: FunctionPlan,
    spelling: Spelling,
    style: Style,
    taken: Callable[[], set[str]],
) -> list[Line]:
    """The new lines of ``fn``'s body, from the leading lines of its first statement to its last line (``taken``:
    the names the function reads or binds, asked for only if a returned value needs a fresh name)."""
    body = fn.body
    if not starts_line(src, body[0]):
        raise Unsupported("a one-line body")
    at = indentation(src.at(body[0].lineno))
    if at != indentation(src.at(fn.lineno)) + style.indent:
        raise Unsupported("a body indented otherwise than the module")
    src.owner = {}
    if owners(src, body, at, src.owner, lead_start(src, body[0], 0) - 1) != end_of(src, body[-1]):
        raise Unsupported("a comment closing the body (libcst's new block drops it)")
    doc = 1 if docstring(body[0]) else 0
    alone(src, body[:doc])
    out = src.flagged(lead_start(src, body[0], 0), end_of(src, body[0]), at) if doc else []
    rest = body[doc:]
    epilogue, finally_steps = plan.epilogue, _NONE
    # as ``function._split_epilogue``
    if _spells_finally(src, fn) and any(_returns_through_finally(stmt) for stmt in rest):
        epilogue = tuple(s for s in plan.epilogue if wants_values(s))
        finally_steps = tuple(s for s in plan.epilogue if not wants_values(s))
    lines = src.flagged(lead_start(src, rest[0], 0), end_of(src, rest[-1]), at) if rest else []
    if epilogue:
        returns = _Returns(src, spelling, style, epilogue, taken)
        lines = returns.block(rest, fn, "body") or lines
        if not _always_returns(src, rest):
            lines += printed([Gen(tuple(guarded_texts(spelling, epilogue)))], at, style)
    if finally_steps:
        lines = _in_try(lines, guarded_texts(spelling, finally_steps), at, style)
    inner = printed([Gen(tuple(guarded_texts(spelling, plan.prologue)))], at, style) + lines
    items = with_items_text(spelling, plan.contexts)
    if not items:
        return out + inner
    header = [(line, True) for line in with_header_at(tuple(items), at, style.indent, style.newline)]
    return out + header + shifted(inner, at, style.indent)


def _in_try(lines: list[Line], steps: list[str], at: str, style: Style) -> list[Line]:
    """``try:`` around ``lines``, ``steps`` in its ``finally:`` (the ``Try`` ``function.rewrite_body`` makes)."""
    deeper = at + style.indent
    head, tail = (f"{at}try:{style.newline}", True), (f"{at}finally:{style.newline}", True)
    return [head, *shifted(lines, at, style.indent), tail, *printed([Gen(tuple(steps))], deeper, style)]


@attrs.define(eq=False)
class _Returns:
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
        for stmt in stmts:
            at = indentation(self.src.at(stmt.lineno))
            start, end = lead_start(self.src, stmt, floor), end_of(self.src, stmt)
            new = self.statement(stmt, at)
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


def _always_returns(src: Lines, body: list[ast.stmt]) -> bool:
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
        return _always_returns(src, last.body) and _always_returns(src, last.orelse)
    return False


def _spells_finally(src: Lines, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The function's lines spell ``finally`` (else no ``try`` of it has a ``finally:``; a cheap first test)."""
    return any("finally" in line for line in src.lines[fn.lineno - 1 : fn.end_lineno])


def _returns_through_finally(node: ast.AST) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return False
    if isinstance(node, (ast.Try, ast.TryStar)) and node.finalbody:
        parts = [node.body, *(h.body for h in node.handlers), node.orelse]
        if any(_has_return(stmt) for part in parts for stmt in part):
            return True
    return any(_returns_through_finally(child) for child in children(node))


def _has_return(node: ast.AST) -> bool:
    if isinstance(node, ast.Return):
        return True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    return any(_has_return(child) for child in children(node))
