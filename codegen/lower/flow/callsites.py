"""Every resolved call of a stream function in a module, and whether its caller can join it later.

The run index and the sync planner both read calls through here, so ``check`` (which reports
on the index) and ``transform`` (which plans on the same calls) never disagree. Which stream function a
call reaches is the function's resolver's to say (:mod:`~codegen.lower.flow.function_resolver`); which calls a
statement makes, and whether it only binds the result, :mod:`~codegen.lower.flow.own_calls`'.
"""

from __future__ import annotations

import ast
import functools
import weakref
from collections.abc import Iterator

import attrs

from codegen.index import scan
from codegen.index.per_index import per_run
from codegen.index.walked import walked_of
from codegen.lower.flow.body_reads import callee_reads
from codegen.lower.flow.callees import Resolved, Resolver
from codegen.lower.flow.function_resolver import RunNames, function_resolver, module_level_names
from codegen.lower.flow.given_changed import gives_changed
from codegen.lower.flow.imports import module_bindings
from codegen.lower.flow.item_stores import containers, item_call
from codegen.lower.flow.own_calls import aware_call, own_calls
from codegen.lower.flow.unkept_state import changed_state, named_state, reads_changed_state

__all__ = ["CallSite", "find_calls"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@attrs.frozen(kw_only=True)
class CallSite:
    key: str
    caller: str  # the caller's qualname
    call: ast.Call
    resolved: Resolved
    bindable: bool  # a plain statement binds or drops the result: the caller can join later
    spelled: str  # ``self.shared(...)``: the call as a message names it
    stmt: ast.stmt | None = None  # the innermost statement that holds the call
    unkept: bool = False  # bound, but it reads module state the caller changes through a local (unkept_state.py)


_FOUND: weakref.WeakKeyDictionary[ast.Module, tuple[str, tuple[object, ...], tuple[CallSite, ...]]]
_FOUND = weakref.WeakKeyDictionary()


def find_calls(module: str, tree: ast.Module, index: RunNames) -> tuple[CallSite, ...]:
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


def _search(module: str, tree: ast.Module, index: RunNames) -> Iterator[CallSite]:
    wanted = _callee_names(index)
    if not wanted:
        return
    bindings = module_bindings(tree, index.package_of(module))
    resolver_of = functools.partial(
        function_resolver, module, tree, index, bindings=bindings, names=module_level_names(tree)
    )
    lists = getattr(index, "elements", {})
    for owner, fn in scan.all_functions(tree):
        resolver = resolver_of(owner, fn) if lists.get(f"{module}:{owner}") else None
        named = {a.arg for a in walked_of(fn.args, ast.arg) if a.annotation is not None}
        if resolver is not None:  # ``layer(x)`` in ``for layer in self.layers``
            named |= set(resolver.loop_lists)
        calls = _statement_calls(fn, wanted | named)
        if calls:
            resolver = resolver_of(owner, fn) if resolver is None else resolver  # made where such a name is called
            facts = _Facts(here=(module, tree), fn=fn, receiver=_receiver(owner, fn))
            yield from _resolved(resolver, f"{owner}.{fn.name}" if owner else fn.name, calls, facts, index)


@attrs.frozen
class _Facts:
    """One caller, whose statements tell of its calls (read when one of them resolves, once per function): its names
    that hold a list or dict only it reaches (a store into an item of one binds the result too), its locals holding
    module state it changes (``unkept_state.py``), and where the tensors it leaves on such state are named
    (``state_keeps.py``)."""

    here: tuple[str, ast.Module]  # the caller's module: its run key, its tree
    fn: _Function
    receiver: str | None

    @property
    def lists(self) -> frozenset[str]:
        return containers(self.fn)

    @property
    def changed(self) -> dict[str, frozenset[str]]:
        return changed_state(self.fn, self.receiver)


def _resolved(
    resolver: Resolver, caller: str, calls: list[tuple[ast.stmt, ast.Call]], facts: _Facts, index: RunNames
) -> Iterator[CallSite]:
    """The calls of one caller (its qualname) that its resolver resolves, as call sites."""
    for stmt, call in calls:
        resolved = resolver.resolve(call)
        if resolved is not None:
            bindable = aware_call(stmt) is call or item_call(stmt, facts.lists) is call
            unkept = (
                bindable and _reads_changed(index, facts, call, resolved) and _unnamed(index, facts, call, resolved)
            )
            spelled = f"{ast.unparse(call.func)}(...)"
            yield CallSite(
                key=resolved.key,
                caller=caller,
                call=call,
                resolved=resolved,
                bindable=bindable and not unkept,
                spelled=spelled,
                unkept=unkept,
                stmt=stmt,
            )


def _reads_changed(index: RunNames, facts: _Facts, call: ast.Call, resolved: Resolved) -> bool:
    """The call reads objects its caller changes: its module's state through a local (``unkept_state.py``), or an
    object given to a parameter annotated with a class (``given_changed.py``)."""
    callee = index.callees.get(resolved.key)
    if reads_changed_state(call, callee_reads(callee), facts.changed):
        return True
    return gives_changed(facts.fn, facts.receiver, call, callee, resolved)


def _unnamed(index: RunNames, facts: _Facts, call: ast.Call, resolved: Resolved) -> bool:
    """The tensors the call reads of objects its caller changes cannot be named (``unkept_state.py``)."""
    return named_state(index, facts.here, facts.fn, facts.receiver, call, resolved) is None


def _receiver(owner: str | None, fn: _Function) -> str | None:
    """A method's object parameter (``self``), if ``fn`` is a method taking one."""
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    return fn.args.args[0].arg if owner and fn.args.args and not static else None


def _statement_calls(fn: _Function, called: frozenset[str]) -> list[tuple[ast.stmt, ast.Call]]:
    """(statement, call) for every call in ``fn``'s own scope whose last name is one of ``called``, with the
    innermost statement holding it."""
    found: list[tuple[ast.stmt, ast.Call]] = []
    if not any(_last_name(call.func) in called for call in walked_of(fn, ast.Call)):
        return found  # no call of ``fn`` (nested scopes too) ends with such a name
    for stmt in scan.statements_breadth_first(fn):
        if stmt is fn or not isinstance(stmt, ast.stmt) or isinstance(stmt, _DEFINITIONS):
            continue
        found += [(stmt, call) for call in own_calls(stmt) if _last_name(call.func) in called]
    return found


@per_run
def _callee_names(index: RunNames) -> frozenset[str]:
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
