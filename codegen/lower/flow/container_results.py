"""Whether a sum of calls' results joins containers: ``ys = self.pair(a) + self.pair(b)`` where ``pair`` returns a
list or a tuple.

``+`` of two lists (or tuples) makes a new one holding the items of both: ``ys[0]`` *is* the first tensor ``pair(a)``
returned, so ``ys[0].add_(1)`` or ``for t in ys: t.mul_(2)`` writes what ``pair`` handed back (its argument, when it
returns ``[a, a.view(-1)]``). A sum is read as joining containers by its spelling (a display or a copy among its
operands: ``value_views.copied``; two names the function binds to containers: ``binding_aliases.containers``), and
the sum of two calls' results by neither: the names bound to it held none of what the results may be, and a write
through them ran while a side call still read the argument (a race the checker reports). A call's result is a
container where the function of the run it runs (``param_writes.resolved_function``) gives one at every ``return``:
a display, a comprehension, a copy, or a name its body binds to one; then the sum holds what each
operand may be, whole, read as any other value (``result_aliases.py``: the arguments a result may be, by the
callee's body). A callee the run cannot read, or that may return a tensor, leaves the sum new memory, as before.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from codegen.index.walked import walked_of
from codegen.lower.flow.binding_aliases import containers
from codegen.lower.flow.call_state_writes import Scope
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.param_writes import resolved_function
from codegen.lower.flow.value_views import DISPLAYS, copied, joined, operands
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["augmented", "concatenated_results", "returns_container", "summed_names"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def concatenated_results(value: ast.expr, scope: Scope | None) -> list[tuple[int | None, ast.expr]] | None:
    """The operands of ``value``, each a part it may hold whole, where it is a ``+`` chain of which some operand is a
    call whose function returns a container on every path; None for any other value."""
    if scope is None or not _summed(value):
        return None
    parts = operands(value)
    if not any(isinstance(p, ast.Call) and _container_call(p, scope) for p in parts):
        return None
    return [(None, part) for part in parts]


def augmented(fn: _Function, scope: Scope | None) -> list[tuple[ast.AST, list[ast.expr], ast.expr]]:
    """``ys += self.pair(a)``: each augmented sum of ``fn`` whose value is a container call's result (or a sum of
    one), as a binding of its target to that value (it extends the list bound before, which then holds both)."""
    augs = [a for a in walked_of(fn, ast.AugAssign) if isinstance(a.op, ast.Add) and isinstance(a.target, ast.Name)]
    return [(a, [a.target], a.value) for a in augs if scope is not None and _made(a.value, scope)]


def summed_names(fn: _Function, scope: Scope | None) -> list[tuple[ast.AST, frozenset[str], frozenset[str]]]:
    """``xs = self.pair(a)``, then ``ys = xs + zs``: each sum of ``fn`` with an operand a name bound to a container
    call's result (``_made``), with the names it binds and the names whose memory its operands may be or hold."""
    if scope is None:
        return []
    made = {n for s in walked_of(fn, ast.Assign) if _made(s.value, scope) for t in s.targets for n in bound_names(t)}
    sums = [(s, operands(s.value)) for s in walked_of(fn, ast.Assign) if _summed(s.value)]
    return [
        (s, frozenset().union(*(bound_names(t) for t in s.targets)), frozenset().union(*map(alias_sources, parts)))
        for s, parts in sums
        if any(isinstance(p, ast.Name) and p.id in made for p in parts)
    ]


def _summed(value: ast.expr) -> TypeGuard[ast.BinOp]:
    return joined(value) and isinstance(value.op, ast.Add)


def _made(value: ast.expr, scope: Scope) -> bool:
    """``value`` is a container call's result, or a sum of one."""
    if isinstance(value, ast.Call):
        return _container_call(value, scope)
    return concatenated_results(value, scope) is not None


def _container_call(call: ast.Call, scope: Scope) -> bool:
    callee = resolved_function(call, scope.functions, scope.owner, scope.receiver)
    return callee is not None and returns_container(callee[0])


def returns_container(fn: _Function) -> bool:
    """Every ``return`` under ``fn`` gives a list, tuple, set or dict: a display, a comprehension, a copy
    (``list(xs)``, ``xs + [b]``), or a name ``fn`` binds to one (``binding_aliases.containers``); and ``fn`` has one
    at least and is no generator. Read as a container where it may be none, a sum is linked to more memory than it
    holds: more joins at worst."""
    returns = walked_of(fn, ast.Return)
    if not returns or walked_of(fn, (ast.Yield, ast.YieldFrom)):
        return False
    made = containers(walked_of(fn, ast.Assign))
    return all(r.value is not None and _container(r.value, made) for r in returns)


def _container(value: ast.expr, made: frozenset[str]) -> bool:
    if isinstance(value, DISPLAYS) or copied(value) is not None:
        return True
    return isinstance(value, ast.Name) and value.id in made
