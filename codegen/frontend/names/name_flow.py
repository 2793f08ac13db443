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

from codegen.frontend.names import bindings
from codegen.frontend.names.bindings import OTHER, STAR, UNBOUND

__all__ = ["Flow", "Problem", "Site"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Values = frozenset[str]
_NOTHING: _Values = frozenset({UNBOUND})


@attrs.frozen(kw_only=True)
class Problem:
    node: ast.AST
    message: str
    hint: str


@attrs.frozen(kw_only=True)
class Site:
    """One binding of a name: the statement, and the value when it is a plain ``name = value`` (or the
    element of ``a, b = x, y`` that binds it)."""

    node: ast.AST
    value: ast.expr | None
    direct: bool  # a statement of the scope's own body (not under if, try, a loop, with or match)


@attrs.define(eq=False)
class _Scope:
    kind: str  # "module", "class" or "function"
    parent: _Scope | None
    state: dict[str, _Values] = attrs.Factory(dict)
    ever: dict[str, set[str]] = attrs.Factory(dict)
    journal: list[tuple[str, _Values]] = attrs.Factory(list)
    declared: dict[str, str] = attrs.Factory(dict)  # function: name -> "global" / "nonlocal"
    local: frozenset[str] = frozenset()
    sites: dict[str, list[Site]] | None = None

    def missing(self, state: dict[str, _Values]) -> _Values:
        return _NOTHING | {STAR} if "*" in state else _NOTHING

    def merge(self, *states: dict[str, _Values]) -> dict[str, _Values]:
        names = {name for state in states for name in state}
        return {name: frozenset().union(*(s.get(name, self.missing(s)) for s in states)) for name in names}


@attrs.define(eq=False)
class Flow:
    walrus: bool = True
    volatile: dict[str, set[str]] = attrs.Factory(dict)  # module names functions rebind (``global``)
    decorators: list[tuple[ast.expr, _Values, bool]] = attrs.Factory(list)  # node, values, rewriter reaches it
    problems: list = attrs.Factory(list)
    sites: dict[tuple[int, int] | None, dict[str, list[Site]]] = attrs.Factory(dict)
    module: _Scope = attrs.field(init=False, default=None)
    _deferred: list[tuple[_Function, _Scope]] = attrs.Factory(list)
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
        self.module = _Scope(kind="module", parent=None, sites=self.sites.setdefault(None, {}))
        self._block(tree.body, self.module, direct=True)
        while self._deferred:
            fn, parent = self._deferred.pop(0)
            self._function(fn, parent)

    def module_aliases(self) -> dict[str, str]:
        found = {}
        for name, values in self.module.ever.items():
            for value in values:
                decorator = bindings.decorator_of(value)
                if decorator:
                    found[name] = decorator
        return found

    def module_packages(self) -> frozenset[str]:
        return frozenset(name for name, values in self.module.ever.items() if values & {"npudsl", "npudsl.decorators"})

    # -- lookups -------------------------------------------------------------------------------

    def lookup(self, name: str, scope: _Scope, *, now: bool = True) -> _Values:
        """The values ``name`` may have in ``scope``: at this point (``now``) or at any time."""
        if scope.kind == "function" and name in scope.declared:
            outer = self.module if scope.declared[name] == "global" else _outer(scope)
            return self.lookup(name, outer, now=False) if outer.kind != "class" else frozenset({OTHER})
        if now:
            values = scope.state.get(name, scope.missing(scope.state))
        else:
            values = frozenset(scope.ever.get(name, _NOTHING | ({STAR} if "*" in scope.ever else set())))
        if scope.kind == "module":
            return values | frozenset(self.volatile.get(name, ()))
        if UNBOUND not in values or (scope.kind == "function" and name in scope.local):
            return values
        # a class body runs now, in its enclosing scope; a function at any time after its definition
        return (values - _NOTHING) | self.lookup(name, _outer(scope), now=now and scope.kind == "class")

    def _chain(self, node: ast.expr, scope: _Scope, *, called: bool = False) -> _Values:
        """The values of ``a.b.c`` (``called``: also of ``a.b.c(...)``, as a decorator is spelled)."""
        spelled = bindings.spelled(node) if called or isinstance(node, (ast.Name, ast.Attribute)) else None
        if spelled is None:
            return frozenset({OTHER})
        root, attrs_ = spelled
        return frozenset(bindings.attribute(v, attrs_) for v in self.lookup(root, scope))

    # -- bindings ------------------------------------------------------------------------------

    def _bind(
        self,
        scope: _Scope,
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

    def _bind_walrus(self, nodes: list[ast.AST], scope: _Scope, direct: bool) -> None:
        if self.walrus:
            for name in bindings.walrus_names(nodes):
                self._bind(scope, name, {OTHER}, nodes[0], direct=direct, replace=False)

    def _bind_targets(self, targets: Iterable[ast.expr], scope: _Scope, node: ast.AST, direct: bool) -> None:
        for target in targets:
            for name in bindings.target_names(target):
                self._bind(scope, name, {OTHER}, node, direct=direct)

    # -- statements ----------------------------------------------------------------------------

    def _block(self, statements: list[ast.stmt], scope: _Scope, *, direct: bool) -> None:
        for stmt in statements:
            self._statement(stmt, scope, direct)

    def _statement(self, stmt: ast.stmt, scope: _Scope, direct: bool) -> None:
        handler = getattr(self, f"_{type(stmt).__name__}", None)
        if handler is not None:
            handler(stmt, scope, direct)
            return
        self._bind_walrus([stmt], scope, direct)  # a simple statement that binds nothing else

    def _Import(self, stmt: ast.Import | ast.ImportFrom, scope: _Scope, direct: bool) -> None:
        for name, value in bindings.import_values(stmt):
            self._bind(scope, name, {value}, stmt, direct=direct)

    _ImportFrom = _Import

    def _Assign(self, stmt: ast.Assign | ast.AnnAssign, scope: _Scope, direct: bool) -> None:
        if stmt.value is None:
            return
        self._bind_walrus([stmt.value], scope, direct)
        values = self._chain(stmt.value, scope)
        for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
            pairs = _paired(target, stmt.value)
            if pairs is not None:  # ``A, B = 8, 16``: each name bound to its own element, as if written alone
                for name, element in pairs:
                    self._bind(scope, name, self._chain(element, scope), stmt, direct=direct, value=element)
                continue
            plain = isinstance(target, ast.Name)
            for name in bindings.target_names(target):
                self._bind(
                    scope, name, values if plain else {OTHER}, stmt, direct=direct, value=stmt.value if plain else None
                )

    _AnnAssign = _Assign

    def _AugAssign(self, stmt: ast.AugAssign, scope: _Scope, direct: bool) -> None:
        self._bind_walrus([stmt.value], scope, direct)
        self._bind_targets([stmt.target], scope, stmt, direct)

    def _Delete(self, stmt: ast.Delete, scope: _Scope, direct: bool) -> None:
        for target in stmt.targets:
            for name in bindings.target_names(target):
                self._bind(scope, name, _NOTHING, stmt, direct=direct)

    def _decorated(self, stmt: _Function | ast.ClassDef, scope: _Scope, direct: bool) -> None:
        self._bind_walrus([n for n in ast.iter_child_nodes(stmt) if not isinstance(n, ast.stmt)], scope, direct)
        reachable = _reachable(scope)
        for node in stmt.decorator_list:
            values = self._chain(node, scope, called=True) - _NOTHING
            self.decorators.append((node, values, reachable))

    def _FunctionDef(self, stmt: _Function, scope: _Scope, direct: bool) -> None:
        self._decorated(stmt, scope, direct)
        self._bind(scope, stmt.name, {OTHER}, stmt, direct=direct)
        if _worth_walking(stmt):
            self._deferred.append((stmt, scope))

    _AsyncFunctionDef = _FunctionDef

    def _ClassDef(self, stmt: ast.ClassDef, scope: _Scope, direct: bool) -> None:
        self._decorated(stmt, scope, direct)
        sites = self.sites.setdefault((stmt.lineno, stmt.col_offset), {}) if _reachable(scope) else None
        body = _Scope(kind="class", parent=scope, sites=sites)
        self._block(stmt.body, body, direct=True)
        self._bind(scope, stmt.name, {OTHER}, stmt, direct=direct)

    def _If(self, stmt: ast.If | ast.While, scope: _Scope, direct: bool) -> None:
        self._bind_walrus([stmt.test], scope, direct)
        entry = dict(scope.state)
        self._block(stmt.body, scope, direct=False)
        then, scope.state = scope.state, entry
        self._block(stmt.orelse, scope, direct=False)
        scope.state = scope.merge(then, scope.state)

    def _loop(self, stmt: ast.For | ast.AsyncFor | ast.While, scope: _Scope) -> None:
        entry, mark = dict(scope.state), len(scope.journal)
        for _ in range(2):  # a second iteration sees what the first bound
            if not isinstance(stmt, ast.While):
                self._bind_targets([stmt.target], scope, stmt, False)
            self._block(stmt.body, scope, direct=False)
            scope.state = scope.merge(entry, scope.state)
        self._block(stmt.orelse, scope, direct=False)
        scope.state = _widen(scope.state, _since(scope, mark), scope.missing(scope.state))  # a break anywhere

    def _For(self, stmt: ast.For | ast.AsyncFor, scope: _Scope, direct: bool) -> None:
        self._bind_walrus([stmt.iter], scope, direct)
        self._loop(stmt, scope)

    _AsyncFor = _For

    def _While(self, stmt: ast.While, scope: _Scope, direct: bool) -> None:
        self._bind_walrus([stmt.test], scope, direct)
        self._loop(stmt, scope)

    def _With(self, stmt: ast.With | ast.AsyncWith, scope: _Scope, direct: bool) -> None:
        self._bind_walrus([item.context_expr for item in stmt.items], scope, direct)
        self._bind_targets([item.optional_vars for item in stmt.items if item.optional_vars], scope, stmt, False)
        self._block(stmt.body, scope, direct=False)

    _AsyncWith = _With

    def _Try(self, stmt: ast.Try, scope: _Scope, direct: bool) -> None:
        entry, mark = dict(scope.state), len(scope.journal)
        self._block(stmt.body, scope, direct=False)
        finished = scope.state
        raised = _widen(scope.merge(entry, finished), _since(scope, mark), scope.missing(entry))  # raised anywhere
        handled = []
        for handler in [] if _guards_npudsl_import(stmt) else stmt.handlers:
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

    def _Match(self, stmt: ast.Match, scope: _Scope, direct: bool) -> None:
        self._bind_walrus([stmt.subject], scope, direct)
        entry, ends = dict(scope.state), []
        for case in stmt.cases:
            scope.state = dict(entry)
            for name in bindings.pattern_names(case.pattern):
                self._bind(scope, name, {OTHER}, case.pattern, direct=False)
            self._bind_walrus([case.guard] if case.guard else [], scope, False)
            self._block(case.body, scope, direct=False)
            ends.append(scope.state)
        scope.state = scope.merge(entry, *ends)

    # -- functions -----------------------------------------------------------------------------

    def _function(self, fn: _Function, parent: _Scope) -> None:
        declared = {
            name: kind
            for stmt in _own_statements(fn.body)
            for kind, names in [
                ("global", getattr(stmt, "names", ()) if isinstance(stmt, ast.Global) else ()),
                ("nonlocal", getattr(stmt, "names", ()) if isinstance(stmt, ast.Nonlocal) else ()),
            ]
            for name in names
        }
        probe = _Scope(kind="function", parent=parent, declared=declared)
        quiet = Flow(walrus=self.walrus, volatile=self.volatile)
        quiet.module = self.module
        quiet._block(fn.body, probe, direct=True)
        self._found.update({k: self._found.get(k, set()) | v for k, v in quiet._found.items()})
        scope = _Scope(
            kind="function", parent=parent, declared=declared, local=frozenset(probe.ever) | frozenset(_parameters(fn))
        )
        scope.state = {name: _NOTHING for name in scope.local}
        for name in _parameters(fn):
            self._bind(scope, name, {OTHER}, fn, direct=True)
        self._block(fn.body, scope, direct=True)


def _paired(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """``(name, element)`` for each name of a tuple or list of plain names unpacking a display of as many
    elements, none starred (``A, B = 8, 16``); else ``None``."""
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))):
        return None
    names, elements = target.elts, value.elts
    if len(names) != len(elements) or not all(isinstance(n, ast.Name) for n in names):
        return None
    if any(isinstance(e, ast.Starred) for e in elements):
        return None
    return [(n.id, e) for n, e in zip(names, elements) if isinstance(n, ast.Name)]


def _outer(scope: _Scope) -> _Scope:
    """The scope whose names ``scope`` sees next: class bodies are skipped (the module is never one)."""
    outer = scope.parent
    while outer is not None and outer.kind == "class":
        outer = outer.parent
    assert outer is not None
    return outer


def _reachable(scope: _Scope) -> bool:
    """No function encloses ``scope``: the rewriter may meet its decorators."""
    while scope.parent is not None:
        if scope.kind == "function":
            return False
        scope = scope.parent
    return True


def _since(scope: _Scope, mark: int) -> dict[str, _Values]:
    """Every value bound in ``scope`` since ``mark``, by name."""
    found: dict[str, _Values] = {}
    for name, values in scope.journal[mark:]:
        found[name] = found.get(name, frozenset()) | values
    return found


def _widen(state: dict[str, _Values], extra: dict[str, _Values], missing: _Values) -> dict[str, _Values]:
    """``state`` where each name of ``extra`` may also have its values."""
    return {**state, **{name: state.get(name, missing) | values for name, values in extra.items()}}


def _parameters(fn: _Function) -> list[str]:
    args = fn.args
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]
    return [a.arg for a in found]


def _own_statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements of a function's own scope (not those of nested functions or classes)."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.stmt):
                    stack.append(child)
                elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    stack.extend(child.body)


def _worth_walking(fn: _Function) -> bool:
    """Whether the body holds something the resolver needs: a decorator or a ``global`` statement."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Global) or getattr(node, "decorator_list", None):
            return True
        stack.extend(
            c for c in ast.iter_child_nodes(node) if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))
        )
    return False


def _guards_npudsl_import(stmt: ast.Try) -> bool:
    """``try: <npudsl imports> except ImportError: <fallback>``: where npudsl runs, the fallback never does."""
    imports = all(
        isinstance(s, (ast.Import, ast.ImportFrom))
        and all(v.startswith("npudsl") for _, v in bindings.import_values(s))
        for s in stmt.body
    )
    caught = [h.type for h in stmt.handlers]
    names = [
        n.id
        for t in caught
        if t is not None
        for n in ([t] if not isinstance(t, ast.Tuple) else t.elts)
        if isinstance(n, ast.Name)
    ]
    return (
        imports
        and bool(caught)
        and None not in caught
        and set(names) <= {"ImportError", "ModuleNotFoundError"}
        and len(names) == sum(1 if not isinstance(t, ast.Tuple) else len(t.elts) for t in caught if t is not None)
    )
