"""A name kept alive at a join is one the caller has bound there: a name first bound further down is left out.

A call's join keeps its results for the caller's stream (``keep_alive.results_to_keep``), and the names the call
holds include those the planner groups with what it writes (``binding_aliases.py``: ``y = x[0]``, ``y = pick(x)``),
whatever their place in the function. Where such a name is first bound below the join, ``record_stream(y, ...)``
there would read it unbound (``UnboundLocalError``). Its memory is the caller's own anyway (the side stream wrote
it in place, it made none of it): nothing is lost by leaving it out. A name counts as bound from the first line that
binds it (a parameter from the start); one bound only below the join, even in a loop around it, is unbound there on
the first pass.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.index.walked import walked_of
from codegen.lower.plan import Anchor
from codegen.lower.steps import Value

__all__ = ["first_bindings", "bound_at"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def first_bindings(fn: _Function) -> dict[str, int]:
    """Each name ``fn`` binds, with the first line binding it (0: a parameter)."""
    found: dict[str, int] = {a.arg: 0 for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    found.update({a.arg: 0 for a in (fn.args.vararg, fn.args.kwarg) if a is not None})
    for node in walked_of(fn, _BINDING):
        for name in _bound(node):
            found[name] = min(found.get(name, node.lineno), node.lineno)  # type: ignore[attr-defined]
    return found


# the kinds of node that bind a name (``_bound``)
_BINDING = (
    ast.Name,
    ast.Import,
    ast.ImportFrom,
    ast.ExceptHandler,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def _bound(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    return []


def bound_at(values: Iterable[Value], anchor: Anchor, first: dict[str, int]) -> tuple[Value, ...]:
    """``values`` but the plain names first bound below ``anchor`` (state, ``self.buf``, is always there)."""
    where, node, _ = anchor
    if where == "before":  # a name the statement itself binds is not bound before it
        return tuple(v for v in values if "." in v.name or first.get(v.name, 0) < node.lineno)  # type: ignore[attr-defined]
    end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    return tuple(v for v in values if "." in v.name or first.get(v.name, 0) <= end)
