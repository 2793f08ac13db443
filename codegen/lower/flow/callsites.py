"""Every resolved call of a stream function in a module, and whether its caller can join it later.

The run index and the sync planner both read calls through here, so ``check`` (which reports
on the index) and ``transform`` (which plans on the same calls) never disagree.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator
from typing import Protocol

import attrs

from codegen.index import scan
from codegen.index.children import children
from codegen.index.per_index import per_index
from codegen.index.walked import walked_of
from codegen.lower.flow.callees import Resolved, Resolver
from codegen.lower.flow.exprs import bound_names, scoped_calls
from codegen.lower.flow.imports import module_bindings

__all__ = ["CallSite", "aware_call", "find_calls", "function_resolver", "module_level_names", "own_calls"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


class _Index(Protocol):
    callees: dict[str, object]
    submodules: dict[str, dict[str, str]]

    def package_of(self, module: str) -> str: ...

    def key_of(self, dotted: str) -> str: ...


@attrs.frozen(kw_only=True)
class CallSite:
    key: str
    caller: str  # the caller's qualname
    call: ast.Call
    resolved: Resolved
    bindable: bool  # a plain statement binds or drops the result: the caller can join later
    spelled: str  # ``self.shared(...)``: the call as a message names it
    stmt: ast.stmt | None = None  # the innermost statement that holds the call


def module_level_names(tree: ast.Module) -> frozenset[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names |= bound_names(node)
    return frozenset(names)


def function_resolver(
    module: str,
    tree: ast.Module,
    index: _Index,
    owner: str | None,
    fn: _Function,
    *,
    bindings: dict | None = None,
    names: frozenset[str] | None = None,
) -> Resolver:
    """The resolver of ``fn``'s calls (``bindings``/``names``: the module's, when already computed)."""
    method = owner is not None
    receiver = scan.params_of(fn)[0] if method and scan.params_of(fn) and not _static(fn) else None
    return Resolver(
        module=module,
        owner=owner,
        callees=index.callees,
        submodules=index.submodules,
        bindings=bindings if bindings is not None else module_bindings(tree, index.package_of(module)),
        module_names=names if names is not None else module_level_names(tree),
        function=fn,
        receiver=receiver,
        key_of=index.key_of,
    )


def _static(fn: _Function) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)


def aware_call(stmt: ast.stmt) -> ast.Call | None:
    """The call a plain statement binds to names or drops, if that is all the statement does."""
    if isinstance(stmt, ast.Expr):
        value = stmt.value
    elif isinstance(stmt, ast.Assign) and all(_names_only(t) for t in stmt.targets):
        value = stmt.value
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        value = stmt.value
    else:
        return None
    return value if isinstance(value, ast.Call) else None


def _names_only(target: ast.expr) -> bool:
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_names_only(e.value if isinstance(e, ast.Starred) else e) for e in target.elts)
    return isinstance(target, ast.Name)


_FOUND: weakref.WeakKeyDictionary[ast.Module, tuple[str, tuple[object, ...], tuple[CallSite, ...]]]
_FOUND = weakref.WeakKeyDictionary()


def find_calls(module: str, tree: ast.Module, index: _Index) -> tuple[CallSite, ...]:
    """Every call in ``module`` that resolves to a stream function of the run.

    Searched once per tree and run: the index and the planner ask for the same calls (what they read of
    the index, its callees, submodules and modules, are the same objects in both).
    """
    read = (index.callees, index.submodules, getattr(index, "modules", None))
    known = _FOUND.get(tree)
    if known is not None and known[0] == module and all(a is b for a, b in zip(known[1], read)):
        return known[2]
    found = tuple(_search(module, tree, index))
    _FOUND[tree] = (module, read, found)
    return found


def _search(module: str, tree: ast.Module, index: _Index) -> Iterator[CallSite]:
    wanted = _callee_names(index)
    if not wanted:
        return
    bindings = module_bindings(tree, index.package_of(module))
    names = module_level_names(tree)
    for owner, fn in scan.all_functions(tree):
        annotated = {a.arg for a in walked_of(fn.args, ast.arg) if a.annotation is not None}
        calls = _statement_calls(fn, wanted | annotated)
        if not calls:
            continue
        resolver = function_resolver(module, tree, index, owner, fn, bindings=bindings, names=names)
        qualname = f"{owner}.{fn.name}" if owner else fn.name
        for stmt, call in calls:
            resolved = resolver.resolve(call)
            if resolved is not None:
                yield CallSite(
                    key=resolved.key,
                    caller=qualname,
                    call=call,
                    resolved=resolved,
                    bindable=aware_call(stmt) is call,
                    spelled=_spelled(call),
                    stmt=stmt,
                )


def _statement_calls(fn: _Function, called: frozenset[str]) -> list[tuple[ast.stmt, ast.Call]]:
    """(statement, call) for every call in ``fn``'s own scope whose last name is one of ``called``, with the
    innermost statement holding it."""
    found: list[tuple[ast.stmt, ast.Call]] = []
    for stmt in scan.statements_breadth_first(fn):
        if stmt is fn or not isinstance(stmt, ast.stmt) or isinstance(stmt, _DEFINITIONS):
            continue
        for part in _own_parts(stmt):
            found += [(stmt, call) for call in scoped_calls(part) if _last_name(call.func) in called]
    return found


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def own_calls(stmt: ast.stmt) -> list[ast.Call]:
    """The calls ``stmt`` itself makes (not those of the statements nested in its blocks)."""
    return [call for part in _own_parts(stmt) for call in scoped_calls(part)]


def _own_parts(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions of ``stmt`` itself, not of the statements nested in its blocks."""
    nested = {
        id(child)
        for field in ("body", "orelse", "finalbody", "handlers", "cases")
        for child in getattr(stmt, field, ()) or ()
    }
    return [child for child in children(stmt) if id(child) not in nested]


@per_index
def _callee_names(index: _Index) -> frozenset[str]:
    """The last name a call of any stream function can end with (a method, a function, a class, an attribute)."""
    names = {key.split(":", 1)[1].rsplit(".", 1)[-1] for key in index.callees}
    names |= {key.split(":", 1)[1].split(".", 1)[0] for key in index.callees}
    names |= {attr for attrs_ in index.submodules.values() for attr in attrs_}
    return frozenset(names)


def _last_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Call):
        return _last_name(func.func)
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _spelled(call: ast.Call) -> str:
    return f"{ast.unparse(call.func)}(...)"
