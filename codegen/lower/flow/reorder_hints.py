"""NPD515: a second fork that moving the caller's own statements would save.

Two calls on one side stream, one after the other in a block, share one fork
when the second reads nothing new from the caller's stream (a same-stream
chain). When it reads a value the caller makes between the two calls, it
needs a fork of its own: a record on the caller's stream and a wait on the side
stream, and the tensors the side stream reads meanwhile kept for it. The
transformer keeps the user's statement order, so it cannot merge the two; this
pass says where the user could: the assignments that make those values read
nothing the first call or the statements after it bind, so they could run
before the first call, and one fork would then serve both calls (the side
stream starting after them). Advisory, on event-sync targets, at the first
such assignment.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from collections.abc import Set as AbstractSet

from codegen.lower.flow.exprs import bound_names, loaded_names
from codegen.lower.flow.statements import statement_blocks
from codegen.lower.plan import CallerPlan, Wait, Wrap
from npudsl import codes

__all__ = ["split_chains"]

_Warn = Callable[[ast.AST, str, str, str], None]


def split_chains(fn: ast.FunctionDef | ast.AsyncFunctionDef, plan: CallerPlan, warn: _Warn) -> None:
    """Warn at each group of assignments whose hoisting would let two calls on one stream share a fork."""
    blocks = {id(block): block for block in statement_blocks(fn).values()}
    for block in blocks.values():
        wrapped = [(i, s) for i, s in enumerate(block) if s in plan.wraps]
        for (first, a), (second, b) in zip(wrapped, wrapped[1:]):
            if _same_stream(plan.wraps[a], plan.wraps[b]) and _forks(plan.wraps[b]):
                movable = _movable(a, block[first + 1 : second], b)
                if movable:
                    _warn(warn, a, b, plan.wraps[b].switch.tag, movable)


def _same_stream(a: Wrap, b: Wrap) -> bool:
    return a.switch.tag == b.switch.tag and a.switch.when == b.switch.when


def _forks(wrap: Wrap) -> bool:
    """The wrap starts by waiting for a fork of the automatic synchronization (not a user event)."""
    return any(isinstance(step, Wait) and not step.event.user for step in wrap.enter)


def _movable(first: ast.stmt, between: list[ast.stmt], second: ast.stmt) -> list[ast.stmt]:
    """The statements between two calls that make what the second reads, when all of them could run before the
    first call unchanged: plain assignments whose inputs nothing before them (from the first call on) binds, and
    whose names nothing before them reads or binds; any other statement between must not touch the second
    call's inputs (it might write them in place)."""
    inputs, producers = _inputs(second), []
    before_read, before_bound = loaded_names(first), bound_names(first)
    for stmt in between:
        if bound_names(stmt) & inputs:
            if not _hoistable(stmt, before_read, before_bound):
                return []
            producers.append(stmt)
        elif loaded_names(stmt) & inputs:
            return []
        before_read, before_bound = before_read | loaded_names(stmt), before_bound | bound_names(stmt)
    return producers


def _hoistable(stmt: ast.stmt, before_read: AbstractSet[str], before_bound: AbstractSet[str]) -> bool:
    plain = isinstance(stmt, (ast.Assign, ast.AnnAssign)) and not _awaits(stmt)
    return plain and not loaded_names(stmt) & before_bound and not bound_names(stmt) & (before_read | before_bound)


def _inputs(stmt: ast.stmt) -> set[str]:
    """The names ``stmt`` reads as data: not the receiver a method is called on (``self`` of ``self.f(x)``)."""
    roots = {id(_root(n.func)) for n in ast.walk(stmt) if isinstance(n, ast.Call)}
    return {
        n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in roots
    }


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def _awaits(stmt: ast.stmt) -> bool:
    return any(isinstance(n, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for n in ast.walk(stmt))


def _warn(warn: _Warn, first: ast.stmt, second: ast.stmt, stream: str, movable: list[ast.stmt]) -> None:
    names = sorted(set().union(*(bound_names(s) for s in movable)) & _inputs(second))
    spelled = ", ".join(f"`{n}`" for n in names)
    warn(
        movable[0],
        codes.SPLIT_CHAIN,
        f"{spelled} made between two calls on {stream!r} (lines {first.lineno} and {second.lineno}): the second "
        "call needs a fork of its own to wait for them",
        f"assign {'them' if len(names) > 1 else 'it'} before line {first.lineno}, and one fork serves both calls; "
        "the side stream then starts after that work",
    )
