"""Tests a caller reads one value at every ``if``: a local bound once, outside loops, to a fresh truth value.

vllm-ascend's context-parallel attention binds ``has_chunked_context = meta.chunked_context is not None``, forks
its query gather under ``if has_chunked_context:``, and reads the result under a later ``if has_chunked_context:``
(the join). Both tests read one value, so no path through the later test's ``else`` has the gather pending; the
merge of paths alone cannot know that, and kept the gather pending on the path where the first test held and the
second did not (a path no run takes), so the function waited for it again before it returned: one wait per call
and layer that nothing needed. Here a call forked only where ``if x:`` held is left out of the state on the paths
of a later ``if x:`` where ``x`` is false (and the other way round for ``if not x:`` and ``else``).

A name qualifies when the function (and any function nested in it) binds it exactly once: a plain
``x = <value>`` outside every loop, so every read of it that does not raise sees that one value, and nothing else
(no ``del``, loop target, ``with``/``except`` alias, walrus, import, parameter, ``global``/``nonlocal``). Its value
must keep its truth: surely a ``bool`` (``is``/``is not``/``in``/``not in`` comparisons, ``not ...``, a bool
constant, ``and``/``or`` of those), or any comparison when the name is read only as a whole ``if`` test (a fresh
result nothing else can reach, so nothing can change it in place).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.exprs import binding_name, scope_nodes
from codegen.lower.flow.state import State

__all__ = ["FixedTests", "fixed_tests"]

Fact = tuple[str, bool]  # a fixed name, and the truth a path knows it has
_Function = ast.FunctionDef | ast.AsyncFunctionDef
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SURE = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


@attrs.frozen(eq=False)
class FixedTests:
    """The fixed names of one caller, and the facts each planned call's statement forks under (by site)."""

    names: frozenset[str] = frozenset()
    forks_under: dict[int, frozenset[Fact]] = attrs.field(factory=dict)

    def branches(self, chain: list[ast.If]) -> list[frozenset[Fact]]:
        """What each body of an ``if``/``elif`` chain knows, then what its ``else`` knows."""
        known: list[frozenset[Fact]] = []
        before: frozenset[Fact] = frozenset()
        for link in chain:
            fact = _tested(link.test, self.names)
            known.append(before | {fact} if fact else before)
            before = before | {(fact[0], not fact[1])} if fact else before
        return [*known, before]

    def narrowed(self, state: State | None, known: frozenset[Fact]) -> State | None:
        """``state`` without the calls that forked only where a fact contradicting ``known`` held."""
        if state is None or not known:
            return state
        contrary = {(name, not truth) for name, truth in known}
        return tuple(p for p in state if not self.forks_under.get(p.site, frozenset()) & contrary)


def fixed_tests(fn: _Function, sites: dict[ast.stmt, int]) -> FixedTests:
    """The fixed names of ``fn``, and for each statement of ``sites`` (its site index) the facts it forks under."""
    names = _fixed_names(fn)
    if not names:
        return FixedTests()
    under: dict[ast.stmt, frozenset[Fact]] = {}
    _walk(fn.body, frozenset(), names, under)
    return FixedTests(names=names, forks_under={i: under[s] for s, i in sites.items() if under.get(s)})


def _walk(
    stmts: list[ast.stmt], facts: frozenset[Fact], names: frozenset[str], under: dict[ast.stmt, frozenset[Fact]]
) -> None:
    for stmt in stmts:
        under[stmt] = facts
        if isinstance(stmt, ast.If):
            fact = _tested(stmt.test, names)
            _walk(stmt.body, facts | {fact} if fact else facts, names, under)
            _walk(stmt.orelse, facts | {(fact[0], not fact[1])} if fact else facts, names, under)
        elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for part in [stmt, *getattr(stmt, "handlers", []), *getattr(stmt, "cases", [])]:
                for field in ("body", "orelse", "finalbody"):
                    _walk(getattr(part, field, None) or [], facts, names, under)


def _tested(test: ast.expr, names: frozenset[str]) -> Fact | None:
    """``x`` -> (x, True), ``not x`` -> (x, False), for a fixed name ``x``; None for any other test."""
    if isinstance(test, ast.Name) and test.id in names:
        return test.id, True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _tested(test.operand, names)
        return (inner[0], not inner[1]) if inner else None
    return None


@per_node
def _fixed_names(fn: _Function) -> frozenset[str]:
    stores: dict[str, int] = {}
    for node in walked_of(fn, ast.Name):
        if not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
    other = set(_other_bindings(fn))
    in_loops = {id(n) for loop in walked_of(fn, _LOOPS) for n in scope_nodes(loop)}
    return frozenset(
        target.id
        for stmt in scope_nodes(fn)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and id(stmt) not in in_loops
        for target in stmt.targets
        if isinstance(target, ast.Name)
        and stores[target.id] == 1
        and target.id not in other
        and _keeps_truth(stmt.value, target.id, fn)
    )


def _other_bindings(fn: _Function) -> Iterable[str]:
    """Every name ``fn`` or a function in it binds otherwise than by an assignment target."""
    for node in walked_of(fn, ast.AST):
        if isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            yield from node.names
        elif node is not fn and (name := binding_name(node)) is not None:
            yield name


def _keeps_truth(value: ast.expr, name: str, fn: _Function) -> bool:
    return _surely_bool(value) or (isinstance(value, ast.Compare) and _only_tested(name, fn))


def _surely_bool(value: ast.expr) -> bool:
    if isinstance(value, ast.Compare):
        return all(isinstance(op, _SURE) for op in value.ops)
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.op, ast.Not)
    if isinstance(value, ast.BoolOp):
        return all(_surely_bool(v) for v in value.values)
    return isinstance(value, ast.Constant) and isinstance(value.value, bool)


def _only_tested(name: str, fn: _Function) -> bool:
    """``name`` is read only as the whole test of an ``if`` (or under its ``not``)."""
    tests = {id(n) for s in walked_of(fn, ast.If) for n in (s.test, getattr(s.test, "operand", None)) if n}
    return all(id(n) in tests for n in walked_of(fn, ast.Name) if n.id == name and isinstance(n.ctx, ast.Load))
