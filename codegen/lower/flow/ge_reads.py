"""GE: a call whose inputs already come after all of its caller's earlier work, on every path, needs no fork edge.

Walking back from the call along each path through the function, the first statement that does work on the
caller's stream decides: when it binds what an op made (a call's result) and the call reads that name, the read
is the edge (GE orders the call after that op, and the caller's stream ran everything before it first); when it
is an earlier call on the same stream under the same guard, that call came after the work before it, and this
one comes after that call. A path that reaches the function's start did no work. Anything else (work the call
does not read, a loop, a ``try``) keeps the edge. Statements that do no work (flags, ``x = y``, tests that only
compare) are passed, and a name they rebind no longer counts as read from further back
(``quantized = scale = None`` before ``if self.multistream: quantized, scale = self.quant(h)``, then
``if quantized is None: quantized, scale = dynamic_quant(h)``: on every path, the call that reads ``quantized``
reads what the last work made). A planned call whose result the call reads and that came after all the caller's
work before it orders the call as the last work would (an edge and a data edge, one after the other); another
planned call switched whenever this one is (one guard) is no work of the caller's stream and is passed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.ge_before import works

__all__ = ["Walk", "ordered_by_reads"]


@attrs.frozen
class _Then:
    """Off the start of a branch: go on before its ``if``, at ``block[at]`` in ``parent``."""

    block: list[ast.stmt]
    at: int
    parent: ast.AST | _Then


@attrs.frozen(kw_only=True)
class Walk:
    parents: dict
    same_stream: Callable[[ast.stmt], bool]  # an earlier planned call on the call's stream, under its guard
    makes: Callable[[ast.stmt], bool]  # the statement binds what an op made (``a, b = f(x)``)
    elsewhere: Callable[[ast.stmt], bool] = lambda _: False  # a planned call on another stream, under its guard
    seen: dict = attrs.field(factory=dict)  # (block, index, reads) -> the answer: each ``if`` splits the paths


def ordered_by_reads(stmt: ast.stmt, reads: frozenset[str], walk: Walk) -> bool:
    """Every path from the function's start to ``stmt`` ends its work with what ``stmt`` reads (see above)."""
    parent = walk.parents.get(stmt)
    if parent is None:
        return False
    block = next((b for b in _blocks(parent) if stmt in b), None)
    return block is not None and _back(block, block.index(stmt), parent, reads, walk)


def _back(block: list[ast.stmt], index: int, parent: ast.AST | _Then, reads: frozenset[str], walk: Walk) -> bool:
    """The paths back from ``block[index]`` (the statements before it, then the blocks around it)."""
    key = (id(block), index, reads)
    if key not in walk.seen:
        walk.seen[key] = _decide(block, index, parent, reads, walk)
    return walk.seen[key]


def _decide(block: list[ast.stmt], index: int, parent: ast.AST | _Then, reads: frozenset[str], walk: Walk) -> bool:
    for at in range(index - 1, -1, -1):
        earlier = block[at]
        if isinstance(earlier, ast.If) and not works(earlier.test):
            return all(_branch(b, _Then(block, at, parent), reads, walk) for b in (earlier.body, earlier.orelse))
        if walk.same_stream(earlier) or (walk.makes(earlier) and bound_names(earlier) <= reads):
            return True
        if walk.elsewhere(earlier):
            reads = reads - bound_names(earlier)
            continue
        if works(earlier):
            return walk.makes(earlier) and bound_names(earlier) <= reads
        reads = reads - bound_names(earlier)
    return _up(parent, reads, walk)


def _branch(branch: list[ast.stmt], outer: _Then, reads: frozenset[str], walk: Walk) -> bool:
    """The paths back through one branch of an ``if``, then on before the ``if`` (``outer``)."""
    if branch and isinstance(branch[-1], (ast.Return, ast.Raise)):
        return True  # no path through it reaches the call
    if not branch:
        return _up(outer, reads, walk)
    return _back(branch, len(branch), outer, reads, walk)


def _up(parent: ast.AST | _Then, reads: frozenset[str], walk: Walk) -> bool:
    """Off the start of a block: the function's start (no work before), or on before the ``if`` around it."""
    if isinstance(parent, _Then):
        return _back(parent.block, parent.at, parent.parent, reads, walk)
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    if not isinstance(parent, ast.If) or works(parent.test):
        return False
    return ordered_by_reads(parent, reads, walk)


def _blocks(parent: ast.AST) -> list[list[ast.stmt]]:
    return [getattr(parent, field, None) or [] for field in ("body", "orelse")]
