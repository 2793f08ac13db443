"""GE: a call that reads only what earlier calls on its own stream made needs no fork edge of its own.

The rule every target keeps (docs/transform.md): a later call on a stream that reads only that stream's results
needs no fork. Those results were made on its stream after that stream's own ordering; whatever the caller did
since, the call reads none of it (GE orders each data dependency, and plans memory, itself). Decided on the
dataflow: every argument is a constant or a name that only such calls bind in the function (no parameter, no
other assignment, loop variable or ``with ... as`` on any path), under the same guard, so on every path the value
it reads came from its own stream, or, where the guard is off, from the caller's stream it also runs on
(``shared_act = self.shared_act(shared_gate_up)`` after the dispatch ran on the main stream).

The same holds for results of calls on other streams (``reads_results``: the routing weights one side stream
gathered, unpacked on another): the call reads none of the caller's work, and GE orders it after the producers
it reads. It does not come after the caller's work either, so no later call leans on it.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.lower.flow.sites import Site

__all__ = ["own_made", "reads_own_stream", "reads_results", "same_guard"]


def reads_own_stream(site: Site, sites: Sequence[Site], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every argument of ``site``'s call is a constant or a name only earlier calls on its stream bind."""
    return _reads_made_by(site, [s for s in sites if s.tag == site.tag and same_guard(s, site)], fn)


def own_made(name: str, site: Site, sites: Sequence[Site], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``name`` is bound in ``fn`` only by calls on ``site``'s stream under its guard."""
    return _bound_only_by(name, [s for s in sites if s.tag == site.tag and same_guard(s, site)], fn)


def reads_results(site: Site, sites: Sequence[Site], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every argument of ``site``'s call is a constant or a name only planned calls (any stream, switched
    whenever it is) bind."""
    return _reads_made_by(site, [s for s in sites if same_guard(s, site) and s is not site], fn)


def _reads_made_by(site: Site, makers: list[Site], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    call = site.call.call
    values = [*call.args, *(k.value for k in call.keywords)]
    if any(k.arg is None for k in call.keywords) or not all(isinstance(v, (ast.Name, ast.Constant)) for v in values):
        return False  # ``*args``, ``**kwargs``, an expression: computed from the caller's values
    names = {v.id for v in values if isinstance(v, ast.Name)}  # makers: before it, or in a loop's last turn
    return bool(names) and all(_bound_only_by(name, makers, fn) for name in names)


def same_guard(earlier: Site, site: Site) -> bool:
    """The two calls switch on the same paths (one guard, read at the call, neither hoisted)."""
    return earlier.guard.expr == site.guard.expr and earlier.guard.hoist is None


def _bound_only_by(name: str, makers: list[Site], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``name`` is bound in ``fn`` by the statements of ``makers`` and nothing else."""
    allowed = {id(n) for m in makers for target in _targets(m.stmt) for n in ast.walk(target)}
    bound = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    return bool(bound) and all(id(n) in allowed for n in bound) and not _bound_otherwise(name, fn)


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    return [stmt.target] if isinstance(stmt, ast.AnnAssign) else []


def _bound_otherwise(name: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A parameter, an ``except ... as``, an import, a ``global``/``nonlocal`` or a ``match`` capture of ``name``."""
    args = fn.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]
    if any(p.arg == name for p in params):
        return True
    for node in ast.walk(fn):
        if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name == name:
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
    return False
