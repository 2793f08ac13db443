"""The caller's locals that only planned calls bind: whatever they hold where they are read, a call made.

``if k is not None: k, s = self.quant(k, cache)`` then ``if k is not None and s is not None: self.scales(s,
cache2)`` (vllm-ascend's DeepSeek-V4 indexer): on the paths where ``quant`` did not run, ``s`` is unbound, so
the analysis cannot say that ``s`` holds ``quant``'s result on every path (a name some path leaves unbound is
"unsure"), and the scale update kept ``s`` alive for the stream that made it. But a name that nothing else
binds (no other assignment, parameter, loop, ``with``, ``except``, import or definition) holds, wherever a read
of it does not fail, what one of those calls returned: made on that call's stream when it forked.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import binding_name, bound_names

__all__ = ["call_bound"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
# the nodes ``binding_name`` reads a name of
_BINDERS: tuple[type[ast.AST], ...] = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias)
_BINDERS += (ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping)
_DECLARED = (ast.Global, ast.Nonlocal)


def call_bound(fn: _Function, calls: Iterable[tuple[int, ast.stmt]]) -> dict[str, frozenset[int]]:
    """Each local of ``fn`` that only the statements of ``calls`` (index, statement) bind -> those indexes."""
    binders: dict[str, set[int]] = {}
    for index, stmt in calls:
        for name in bound_names(stmt):
            binders.setdefault(name, set()).add(index)
    by_calls = {id(n) for _, stmt in calls for n in walked_of(stmt, ast.Name) if _stores(n)}
    others = {n.id for n in walked_of(fn, ast.Name) if _stores(n) and id(n) not in by_calls}
    others |= {bound for n in walked_of(fn, _BINDERS) if (bound := binding_name(n)) is not None}
    others |= {a.arg for a in _parameters(fn)}
    others |= {name for n in walked_of(fn, _DECLARED) if isinstance(n, _DECLARED) for name in n.names}
    return {name: frozenset(found) for name, found in binders.items() if name not in others}


def _stores(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))


def _parameters(fn: _Function) -> list[ast.arg]:
    args = fn.args
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return found + [a for a in (args.vararg, args.kwarg) if a is not None]
