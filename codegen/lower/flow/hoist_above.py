"""Which main-stream statements a side call may be issued above, as the source reads: the syntactic half of
``hoist.py`` (the dataflow half is the planner's own analysis, run with the call moved).

The statements between run once, in order, each time the call's statement is reached, and leave the call's
arguments as they were: plain statements and ``if`` statements of such, with no jump, ``return``, ``raise``,
``assert``, ``del``, ``global``, definition, ``yield`` or ``await`` (the call would run where it did not), no
attribute stored (the call's body or guard may read it), nothing bound that the call reads or binds, and nothing
read that the call binds. No planned call on the call's stream (``hoist.py`` passes over those on another),
``sync="manual"`` call or graph break stands among them. The call
itself binds its result to names (or drops it), computes no argument on the main stream, reads its guard as
spelled, waits for and records no event of the user's (``@after``, ``@records``: those order it, not its data),
and stands alone on its lines, as the earlier call does (the rewriter moves whole lines).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable

from codegen.index.walked import walked, walked_of
from codegen.lower.flow.exprs import binding_name, bound_names
from codegen.lower.flow.own_calls import aware_call
from codegen.lower.flow.site_sync import Flags, hoisted_arguments
from codegen.lower.flow.sites import Site

__all__ = ["alone", "may_move", "plain"]

_PLAIN = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass)
_NEVER = (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)


def may_move(site: Site, between: list[ast.stmt], fixed: Collection[ast.stmt], moved: ast.stmt | None = None) -> bool:
    """``site``'s call may be issued above ``between`` (``fixed``: statements nothing moves across; ``moved``: what
    moves with it, the ``if`` around it: ``hoist_into.py``)."""
    if not between or aware_call(site.stmt) is not site.call.call or site.guard.hoist is not None:
        return False
    if site.callee.user_events:  # type: ignore[attr-defined]  # the user's events order it, not its data
        return False
    if hoisted_arguments(site, Flags(taken=set())):
        return False
    inner = [s for m in between for s in walked_of(m, ast.stmt)]
    if not all(plain(s) for s in inner) or any(s in fixed for s in inner):
        return False
    held = _names(moved or site.stmt) | ({site.guard.expr.split(".")[0]} if site.guard.expr else set())
    made = bound_names(site.stmt)
    return not any(_binds(s) & (held | made) or _names(s) & made or _stores_attribute(s) for s in inner)


def plain(stmt: ast.stmt) -> bool:
    """A statement that runs through to the next one: plain, or an ``if`` of such; nothing in it yields."""
    if not isinstance(stmt, (*_PLAIN, ast.If)):
        return False
    own = [stmt.test] if isinstance(stmt, ast.If) else [stmt]
    return not any(isinstance(n, _NEVER) for part in own for n in walked(part))


def alone(stmt: ast.stmt, block: Iterable[ast.stmt]) -> bool:
    """No other statement of ``block`` shares a line with ``stmt``."""
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    return not any(
        other is not stmt and other.lineno <= last and (other.end_lineno or other.lineno) >= first for other in block
    )


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in walked(node) if isinstance(n, ast.Name)}


def _binds(stmt: ast.stmt) -> set[str]:
    own = [stmt.test] if isinstance(stmt, ast.If) else [stmt]
    found = {name for part in own for name in bound_names(part)}
    deleted = {n.id for part in own for n in walked(part) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}
    return found | deleted | {b for part in own for n in walked(part) if (b := binding_name(n)) is not None}


def _stores_attribute(stmt: ast.stmt) -> bool:
    own = [stmt.test] if isinstance(stmt, ast.If) else [stmt]
    return any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) for p in own for n in walked(p))
