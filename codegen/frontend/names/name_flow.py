"""The values each name may have at each decorator: one forward pass over a module's scopes.

Within a scope, statements run in order, so a binding replaces what came before;
a branch (``if``, ``match``), a loop, or an exception (``try``) joins the values
of every path that may reach a point. A class body falls back to its enclosing
scope as it is when the class statement runs; a function's free names to the
enclosing scopes as they may be at any time (every value ever bound there).
Functions are walked after the module, and only those that hold a decorator or
a ``global`` statement; a ``global`` rebinding seen there makes a second pass
that counts it everywhere.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from codegen.frontend.names import bindings, scopes
from codegen.frontend.names.bindings import OTHER, STAR, UNBOUND
from codegen.frontend.names.compound import CompoundStatements
from codegen.frontend.names.function_bodies import Function, declared, parameters, worth_walking
from codegen.frontend.names.scopes import NOTHING, Scope, Values
from codegen.frontend.names.sites import Site

__all__ = ["Flow"]


@attrs.define(eq=False)
class Flow(CompoundStatements):
    """The walk: simple statements and bindings here, compound statements in ``CompoundStatements``."""

    walrus: bool = True
    volatile: dict[str, set[str]] = attrs.Factory(dict)  # module names functions rebind (``global``)
    decorators: list[tuple[ast.expr, Values, bool]] = attrs.Factory(list)  # node, values, rewriter reaches it
    problems: list = attrs.Factory(list)
    sites: dict[tuple[int, int] | None, dict[str, list[Site]]] = attrs.Factory(dict)
    module: Scope = attrs.field(init=False, default=None)
    _deferred: list[tuple[Function, Scope]] = attrs.Factory(list)
    _found: dict[str, set[str]] = attrs.Factory(dict)

    @property
    def rebound(self) -> set[str]:
        return set(self.volatile) | ({"*"} if "*" in self.module.ever else set())

    def run(self, tree: ast.Module) -> None:
        self._pass(tree)
        if self._found and self._found != self.volatile:
            self.volatile = {name: set(values) for name, values in self._found.items()}
            self.decorators, self.sites, self._deferred = [], {}, []
            self._pass(tree)

    def _pass(self, tree: ast.Module) -> None:
        self.module = Scope(kind="module", parent=None, sites=self.sites.setdefault(None, {}))
        self._block(tree.body, self.module, direct=True)
        while self._deferred:
            fn, parent = self._deferred.pop(0)
            self._function(fn, parent)

    # -- lookups -------------------------------------------------------------------------------

    def lookup(self, name: str, scope: Scope, *, now: bool = True) -> Values:
        """The values ``name`` may have in ``scope``: at this point (``now``) or at any time."""
        if scope.kind == "function" and name in scope.declared:
            outer = self.module if scope.declared[name] == "global" else scopes.outer(scope)
            return self.lookup(name, outer, now=False) if outer.kind != "class" else frozenset({OTHER})
        if now:
            values = scope.state.get(name, scope.missing(scope.state))
        else:
            values = frozenset(scope.ever.get(name, NOTHING | ({STAR} if "*" in scope.ever else set())))
        if scope.kind == "module":
            return values | frozenset(self.volatile.get(name, ()))
        if UNBOUND not in values or (scope.kind == "function" and name in scope.local):
            return values
        # a class body runs now, in its enclosing scope; a function at any time after its definition
        return (values - NOTHING) | self.lookup(name, scopes.outer(scope), now=now and scope.kind == "class")

    def _chain(self, node: ast.expr, scope: Scope, *, called: bool = False) -> Values:
        """The values of ``a.b.c`` (``called``: also of ``a.b.c(...)``, as a decorator is spelled)."""
        spelled = bindings.spelled(node) if called or isinstance(node, (ast.Name, ast.Attribute)) else None
        if spelled is None:
            return frozenset({OTHER})
        root, attrs_ = spelled
        return frozenset(bindings.attribute(v, attrs_) for v in self.lookup(root, scope))

    def _bind(
        self,
        scope: Scope,
        name: str,
        values: Iterable[str],
        node: ast.AST,
        *,
        direct: bool,
        value: ast.expr | None = None,
        replace: bool = True,
    ) -> None:
        values = frozenset(values)
        if scope.kind == "function" and scope.declared.get(name) == "global":
            self._found.setdefault(name, set()).update(values)
            return
        if name == "*":  # a star import of another module may rebind any name
            scope.state = {n: v | {STAR} for n, v in scope.state.items()}
        elif not replace:
            values |= scope.state.get(name, scope.missing(scope.state))
        scope.state[name] = values
        scope.journal.append((name, values))
        scope.ever.setdefault(name, set()).update(values)
        if scope.sites is not None:
            scope.sites.setdefault(name, []).append(Site(node=node, value=value, direct=direct))

    def _bind_walrus(self, nodes: list[ast.AST], scope: Scope, direct: bool) -> None:
        if self.walrus:
            for name in bindings.walrus_names(nodes):
                self._bind(scope, name, {OTHER}, nodes[0], direct=direct, replace=False)

    def _bind_targets(self, targets: Iterable[ast.expr], scope: Scope, node: ast.AST, direct: bool) -> None:
        for target in targets:
            for name in bindings.target_names(target):
                self._bind(scope, name, {OTHER}, node, direct=direct)

    # -- statements ----------------------------------------------------------------------------

    def _block(self, statements: list[ast.stmt], scope: Scope, *, direct: bool) -> None:
        for stmt in statements:
            self._statement(stmt, scope, direct)

    def _statement(self, stmt: ast.stmt, scope: Scope, direct: bool) -> None:
        handler = getattr(self, f"_{type(stmt).__name__}", None)
        if handler is not None:
            handler(stmt, scope, direct)
            return
        self._bind_walrus([stmt], scope, direct)  # a simple statement that binds nothing else

    def _Import(self, stmt: ast.Import | ast.ImportFrom, scope: Scope, direct: bool) -> None:
        for name, value in bindings.import_values(stmt):
            self._bind(scope, name, {value}, stmt, direct=direct)

    _ImportFrom = _Import

    def _Assign(self, stmt: ast.Assign | ast.AnnAssign, scope: Scope, direct: bool) -> None:
        if stmt.value is None:
            return
        self._bind_walrus([stmt.value], scope, direct)
        for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
            # ``A, B = 8, 16``: each name bound to its own element, as if written alone
            pairs = bindings.paired(target, stmt.value)
            plain = pairs is not None or isinstance(target, ast.Name)
            if pairs is None:
                pairs = [(name, stmt.value) for name in bindings.target_names(target)]
            for name, value in pairs:
                values = self._chain(value, scope) if plain else {OTHER}
                self._bind(scope, name, values, stmt, direct=direct, value=value if plain else None)

    _AnnAssign = _Assign

    def _AugAssign(self, stmt: ast.AugAssign, scope: Scope, direct: bool) -> None:
        self._bind_walrus([stmt.value], scope, direct)
        self._bind_targets([stmt.target], scope, stmt, direct)

    def _Delete(self, stmt: ast.Delete, scope: Scope, direct: bool) -> None:
        for target in stmt.targets:
            for name in bindings.target_names(target):
                self._bind(scope, name, NOTHING, stmt, direct=direct)

    def _decorated(self, stmt: Function | ast.ClassDef, scope: Scope, direct: bool) -> None:
        self._bind_walrus([n for n in ast.iter_child_nodes(stmt) if not isinstance(n, ast.stmt)], scope, direct)
        reachable = scopes.reachable(scope)
        for node in stmt.decorator_list:
            values = self._chain(node, scope, called=True) - NOTHING
            self.decorators.append((node, values, reachable))

    def _FunctionDef(self, stmt: Function, scope: Scope, direct: bool) -> None:
        self._decorated(stmt, scope, direct)
        self._bind(scope, stmt.name, {OTHER}, stmt, direct=direct)
        if worth_walking(stmt):
            self._deferred.append((stmt, scope))

    _AsyncFunctionDef = _FunctionDef

    def _ClassDef(self, stmt: ast.ClassDef, scope: Scope, direct: bool) -> None:
        self._decorated(stmt, scope, direct)
        sites = self.sites.setdefault((stmt.lineno, stmt.col_offset), {}) if scopes.reachable(scope) else None
        body = Scope(kind="class", parent=scope, sites=sites)
        self._block(stmt.body, body, direct=True)
        self._bind(scope, stmt.name, {OTHER}, stmt, direct=direct)

    def _function(self, fn: Function, parent: Scope) -> None:
        names = declared(fn)
        probe = Scope(kind="function", parent=parent, declared=names)
        quiet = Flow(walrus=self.walrus, volatile=self.volatile)
        quiet.module = self.module
        quiet._block(fn.body, probe, direct=True)
        self._found.update({k: self._found.get(k, set()) | v for k, v in quiet._found.items()})
        local = frozenset(probe.ever) | frozenset(parameters(fn))
        scope = Scope(kind="function", parent=parent, declared=names, local=local)
        scope.state = {name: NOTHING for name in scope.local}
        for name in parameters(fn):
            self._bind(scope, name, {OTHER}, fn, direct=True)
        self._block(fn.body, scope, direct=True)
