"""A decorated function's own plan applied to its text (as :mod:`codegen.rewrite.function` applies it to libcst).

Its core limit wraps the body (every line libcst indents moves one level deeper), its
``@after`` waits start it, and its epilogue runs before each ``return`` of an indented
block (the value bound to a fresh name when a step reads it) and at the end. A ``return``
inside ``try ... finally`` moves the steps that read no returned value to a ``finally``
around the body. libcst makes the body a new block: a footer comment would go, so it is
Unsupported, as are a returned tuple of expressions to bind one by one, and a function
that also calls stream functions. The steps before each ``return`` are ``textreturns``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.index.children import children
from codegen.lower.plan import FunctionPlan, Step
from codegen.rewrite.build import guarded_texts, with_header_at, with_items_text
from codegen.rewrite.segments import Style
from codegen.rewrite.textblocks import alone, docstring, end_of, lead_start, owners, starts_line
from codegen.rewrite.textitems import Gen, printed
from codegen.rewrite.textlines import Line, Lines, Unsupported, indentation, shifted
from codegen.rewrite.textreturns import Returns, always_returns
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
    at = _body_indent(src, fn, style)
    doc = 1 if docstring(body[0]) else 0
    alone(src, body[:doc])
    out = src.flagged(lead_start(src, body[0], 0), end_of(src, body[0]), at) if doc else []
    lines = _rest(src, fn, body[doc:], plan, _Spelled(spelling, style, at, taken))
    inner = printed([Gen(tuple(guarded_texts(spelling, plan.prologue)))], at, style) + lines
    items = with_items_text(spelling, plan.contexts)
    if not items:
        return out + inner
    header = [(line, True) for line in with_header_at(tuple(items), at, style.indent, style.newline)]
    return out + header + shifted(inner, at, style.indent)


@attrs.frozen
class _Spelled:
    """How the body's new lines are spelled: the target, the module's style, the body's indentation."""

    spelling: Spelling
    style: Style
    at: str
    taken: Callable[[], set[str]]


def _body_indent(src: Lines, fn: ast.FunctionDef | ast.AsyncFunctionDef, style: Style) -> str:
    """The body's indentation, once it is known to be a block libcst would rewrite the same way."""
    body = fn.body
    if not starts_line(src, body[0]):
        raise Unsupported("a one-line body")
    at = indentation(src.at(body[0].lineno))
    if at != indentation(src.at(fn.lineno)) + style.indent:
        raise Unsupported("a body indented otherwise than the module")
    src.owner = {}
    if owners(src, body, at, src.owner, lead_start(src, body[0], 0) - 1) != end_of(src, body[-1]):
        raise Unsupported("a comment closing the body (libcst's new block drops it)")
    return at


def _rest(
    src: Lines, fn: ast.FunctionDef | ast.AsyncFunctionDef, rest: list[ast.stmt], plan: FunctionPlan, how: _Spelled
) -> list[Line]:
    """The statements after the docstring, the epilogue before each ``return`` and at the end."""
    epilogue, finally_steps = plan.epilogue, _NONE
    # as ``function._split_epilogue``
    if _spells_finally(src, fn) and any(_returns_through_finally(stmt) for stmt in rest):
        epilogue = tuple(s for s in plan.epilogue if wants_values(s))
        finally_steps = tuple(s for s in plan.epilogue if not wants_values(s))
    lines = src.flagged(lead_start(src, rest[0], 0), end_of(src, rest[-1]), how.at) if rest else []
    if epilogue:
        returns = Returns(src, how.spelling, how.style, epilogue, how.taken)
        lines = returns.block(rest, fn, "body") or lines
        if not always_returns(src, rest):
            lines += printed([Gen(tuple(guarded_texts(how.spelling, epilogue)))], how.at, how.style)
    if finally_steps:
        lines = _in_try(lines, guarded_texts(how.spelling, finally_steps), how.at, how.style)
    return lines


def _in_try(lines: list[Line], steps: list[str], at: str, style: Style) -> list[Line]:
    """``try:`` around ``lines``, ``steps`` in its ``finally:`` (the ``Try`` ``function.rewrite_body`` makes)."""
    deeper = at + style.indent
    head, tail = (f"{at}try:{style.newline}", True), (f"{at}finally:{style.newline}", True)
    return [head, *shifted(lines, at, style.indent), tail, *printed([Gen(tuple(steps))], deeper, style)]


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
