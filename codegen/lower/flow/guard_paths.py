"""A caller's body as it runs where one guard holds: the branches that cannot run there left out.

A call guarded by ``self.multistream`` forks only where that flag holds, so what its fork must wait for
(``fork.py``) depends on those paths alone. On them, ``if self.multistream:`` runs its body and ``if not
self.multistream:`` its ``else``; a name the paths surely bound to a value that is not None
(:mod:`codegen.lower.flow.none_facts`) makes ``if q is None:`` run its ``else`` (and ``is not None`` its body).
So ``if self.multistream: q, s = self.quant(h, True)`` then ``if q is None: q, s = quant(h)`` gives,
where the flag holds, ``q`` from the side stream only.

A guard test counts only when it reads the same value as the calls: a stable dotted name
(``stability.py``) from the ``if`` on, compared by the planner's key (``guard_alias.py``). A fact about a name
holds from the assignment that made it until any statement may rebind it: a compound statement (a loop, a
``try``, a ``with``) forgets the names it binds anywhere inside, and an ``if`` both of whose branches may run
keeps what both leave. A function that lets a nested one rebind its names (``nonlocal``) gets no None fact.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Sequence
from typing import TypeVar

import attrs

from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow.none_facts import not_none, rebound
from codegen.lower.flow.tensors import Returns

__all__ = ["Assumed", "pruned"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
Facts = frozenset[str]  # the names surely not None here
_NONE: Facts = frozenset()
_N = TypeVar("_N", bound=ast.AST)


@attrs.frozen(kw_only=True)
class Assumed:
    """The guard assumed to hold, by key, and how to read the facts that decide an ``if``."""

    key: str
    key_of: Callable[[str, int], str | None]  # a dotted test at a line -> its guard key (None: not stable there)
    returns: Returns  # the callables whose result is never None (``none_facts.never_none``)


def pruned(fn: _Function, assumed: Assumed) -> _Function | None:
    """``fn`` without the branches that cannot run where ``assumed.key`` holds (a new function sharing ``fn``'s
    simple statements); None when every branch may run."""
    if not walked_of(fn, ast.If):
        return None  # no branch to leave out
    nonlocal_ = any(walked_of(fn, ast.Nonlocal))
    walk = _Prune(assumed=attrs.evolve(assumed, returns=_unshadowed(fn, assumed.returns)), facts_on=not nonlocal_)
    body, _ = walk.block(fn.body, _NONE)
    return _copied(fn, body=body) if walk.changed else None


def _unshadowed(fn: _Function, returns: Returns) -> Returns:
    """The callables ``fn`` spells as the module does: not ``f`` where ``f`` is a parameter or a local of ``fn``,
    not ``self.m`` where ``fn`` binds ``self`` again."""
    local = frozenset().union(*(rebound(stmt) for stmt in fn.body))
    params = {a.arg for a in walked_of(fn.args, ast.arg)}
    return {k: v for k, v in returns.items() if k.partition(".")[0] not in (local if "." in k else local | params)}


@attrs.define(eq=False)
class _Prune:
    assumed: Assumed
    facts_on: bool
    changed: bool = False

    def block(self, stmts: list[ast.stmt], facts: Facts) -> tuple[list[ast.stmt], Facts]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            kept, facts = self.statement(stmt, facts)
            out += kept
        return out, facts

    def statement(self, stmt: ast.stmt, facts: Facts) -> tuple[list[ast.stmt], Facts]:
        if isinstance(stmt, ast.If):
            return self._if(stmt, facts)
        left = facts - rebound(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not _blocks(stmt):
            made = not_none(stmt, self.assumed.returns) if self.facts_on else _NONE
            return [stmt], left | made
        return [self._inside(stmt, left)], left

    def _if(self, stmt: ast.If, facts: Facts) -> tuple[list[ast.stmt], Facts]:
        facts = facts - rebound(stmt.test)
        runs = self._decided(stmt, facts)
        if runs is not None:
            self.changed = True
            return self.block(stmt.body if runs else stmt.orelse, facts)
        body, after_body = self.block(stmt.body, facts | _known_in(stmt.test, True))
        orelse, after_else = self.block(stmt.orelse, facts | _known_in(stmt.test, False))
        return [_copied(stmt, body=body, orelse=orelse)], after_body & after_else

    def _inside(self, stmt: ast.stmt, facts: Facts) -> ast.stmt:
        """A compound statement with its blocks pruned; ``facts`` hold everywhere inside it (nothing in it
        rebinds them)."""
        own = [f for f in ("body", "orelse", "finalbody") if _has(stmt, f)]
        fields: dict[str, Sequence[ast.AST]] = {f: self.block(getattr(stmt, f), facts)[0] for f in own}
        for f in ("handlers", "cases"):
            if getattr(stmt, f, None):
                fields[f] = [_copied(part, body=self.block(part.body, facts)[0]) for part in getattr(stmt, f)]
        return _copied(stmt, **fields)

    def _decided(self, stmt: ast.If, facts: Facts) -> bool | None:
        """Whether the ``if``'s body surely runs (True), surely does not (False), where the guard holds."""
        test, negated = (
            (stmt.test.operand, True)
            if isinstance(stmt.test, ast.UnaryOp) and _is_not(stmt.test)
            else (stmt.test, False)
        )
        dotted = scan.dotted_name(test)
        if dotted is not None and self.assumed.key_of(dotted, stmt.lineno) == self.assumed.key:
            return not negated
        none_test = _none_test(stmt.test)
        if none_test is not None and self.facts_on and none_test[0] in facts:
            return not none_test[1]  # ``x is None`` is False, ``x is not None`` True
        return None


def _is_not(test: ast.expr) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)


def _none_test(test: ast.expr) -> tuple[str, bool] | None:
    """``x is None`` -> (x, True), ``x is not None`` -> (x, False)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
        return None
    right = test.comparators[0]
    if not (isinstance(right, ast.Constant) and right.value is None):
        return None
    op = test.ops[0]
    if not isinstance(op, (ast.Is, ast.IsNot)):
        return None
    return test.left.id, isinstance(op, ast.Is)


def _known_in(test: ast.expr, taken: bool) -> Facts:
    """The name the branch (``taken``: the body) knows is not None: ``x is not None``'s body, ``x is None``'s
    ``else``."""
    found = _none_test(test)
    return frozenset({found[0]}) if found is not None and found[1] != taken else _NONE


def _blocks(stmt: ast.stmt) -> bool:
    return any(getattr(stmt, f, None) for f in ("body", "orelse", "finalbody", "handlers", "cases"))


def _has(stmt: ast.AST, field: str) -> bool:
    return isinstance(getattr(stmt, field, None), list)


def _copied(node: _N, **blocks: Sequence[ast.AST]) -> _N:
    """A shallow copy of ``node`` with new blocks (an emptied ``body`` or ``finalbody`` holds a ``pass``: the
    tree stays valid); ``node`` itself is never changed (kept walks stay true)."""
    new = copy.copy(node)
    for field, block in blocks.items():
        emptied = not block and field in ("body", "finalbody") and getattr(node, field)
        setattr(new, field, [_pass(node)] if emptied else list(block))
    return new


def _pass(node: ast.AST) -> ast.stmt:
    return ast.Pass(lineno=node.lineno, col_offset=node.col_offset)  # type: ignore[attr-defined]
