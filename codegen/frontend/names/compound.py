"""The name flow through compound statements: which paths reach the statement after each.

A branch joins the state of each arm, a loop runs its body twice (the second
pass sees what the first bound) and may stop anywhere, a ``try`` handler may
start after any binding of its body. ``name_flow.Flow`` inherits these
handlers; simple statements and bindings stay there.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from codegen.frontend.names.bindings import OTHER, pattern_names
from codegen.frontend.names.function_bodies import guards_npudsl_import
from codegen.frontend.names.scopes import Scope, since, widen

__all__ = ["CompoundStatements"]


class CompoundStatements:
    """``_If``, loops, ``_With``, ``_Try`` and ``_Match`` for a walk that provides the three below."""

    _block: Callable[..., None]  # (statements, scope, *, direct)
    _bind_walrus: Callable[[list[ast.AST], Scope, bool], None]
    _bind_targets: Callable[[Iterable[ast.expr], Scope, ast.AST, bool], None]
    _bind: Callable[..., None]  # (scope, name, values, node, *, direct)

    def _If(self, stmt: ast.If, scope: Scope, direct: bool) -> None:
        self._bind_walrus([stmt.test], scope, direct)
        entry = dict(scope.state)
        self._block(stmt.body, scope, direct=False)
        then, scope.state = scope.state, entry
        self._block(stmt.orelse, scope, direct=False)
        scope.state = scope.merge(then, scope.state)

    def _loop(self, stmt: ast.For | ast.AsyncFor | ast.While, scope: Scope) -> None:
        entry, mark = dict(scope.state), len(scope.journal)
        for _ in range(2):  # a second iteration sees what the first bound
            if not isinstance(stmt, ast.While):
                self._bind_targets([stmt.target], scope, stmt, False)
            self._block(stmt.body, scope, direct=False)
            scope.state = scope.merge(entry, scope.state)
        self._block(stmt.orelse, scope, direct=False)
        scope.state = widen(scope.state, since(scope, mark), scope.missing(scope.state))  # a break anywhere

    def _For(self, stmt: ast.For | ast.AsyncFor, scope: Scope, direct: bool) -> None:
        self._bind_walrus([stmt.iter], scope, direct)
        self._loop(stmt, scope)

    _AsyncFor = _For

    def _While(self, stmt: ast.While, scope: Scope, direct: bool) -> None:
        self._bind_walrus([stmt.test], scope, direct)
        self._loop(stmt, scope)

    def _With(self, stmt: ast.With | ast.AsyncWith, scope: Scope, direct: bool) -> None:
        self._bind_walrus([item.context_expr for item in stmt.items], scope, direct)
        self._bind_targets([item.optional_vars for item in stmt.items if item.optional_vars], scope, stmt, False)
        self._block(stmt.body, scope, direct=False)

    _AsyncWith = _With

    def _Try(self, stmt: ast.Try, scope: Scope, direct: bool) -> None:
        entry, mark = dict(scope.state), len(scope.journal)
        self._block(stmt.body, scope, direct=False)
        finished = scope.state
        raised = widen(scope.merge(entry, finished), since(scope, mark), scope.missing(entry))  # raised anywhere
        handled = []
        for handler in [] if guards_npudsl_import(stmt) else stmt.handlers:
            scope.state = dict(raised)
            if handler.name:
                self._bind(scope, handler.name, {OTHER}, handler, direct=False)
            self._block(handler.body, scope, direct=False)
            handled.append(scope.state)
        scope.state = dict(finished)
        self._block(stmt.orelse, scope, direct=False)
        scope.state = scope.merge(scope.state, *handled)
        self._block(stmt.finalbody, scope, direct=False)

    _TryStar = _Try

    def _Match(self, stmt: ast.Match, scope: Scope, direct: bool) -> None:
        self._bind_walrus([stmt.subject], scope, direct)
        entry, ends = dict(scope.state), []
        for case in stmt.cases:
            scope.state = dict(entry)
            for name in pattern_names(case.pattern):
                self._bind(scope, name, {OTHER}, case.pattern, direct=False)
            self._bind_walrus([case.guard] if case.guard else [], scope, False)
            self._block(case.body, scope, direct=False)
            ends.append(scope.state)
        scope.state = scope.merge(entry, *ends)
