"""The calls one module makes of its own functions, as far as the run sees them (NPD302 reads its schedule).

Whether two core limits may run at once depends on what runs while a stream call is pending: the statements of
its caller up to the join, and whatever the functions they call run in turn. This is that call graph: a call
resolves to a function of the module when the run resolves it to a stream function
(:func:`codegen.lower.flow.callsites.find_calls`), or it is ``self.method(...)`` of the caller's class,
``function(...)`` of the module, or ``self.sub(...)`` / ``self.sub.method(...)`` of a submodule whose class the
index knows (its ``forward``, or that method). Anything else naming a function of the module (a call the run
cannot resolve, ``self.helper.prolog(x)``; a reference, ``hook = self.prolog``; a call in a lambda or a nested
function; a class whose methods run such calls, named other than to assign a known submodule) may run it at a
time this graph does not show: the function *escapes*.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import attrs

from codegen.index import scan
from codegen.index.info import RunIndex
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.callsites import find_calls
from codegen.lower.flow.own_calls import own_calls

__all__ = ["ModuleCalls", "statements"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


@attrs.define(eq=False)
class ModuleCalls:
    """The module's functions (by qualname), what each statement of theirs calls, and what each may run."""

    module: str
    tree: ast.Module
    index: RunIndex
    functions: dict[str, _Function] = attrs.field(init=False)
    targets: dict[ast.Call, str] = attrs.field(init=False)  # each resolved call -> the function it runs
    _runs: dict[str, frozenset[str]] = attrs.Factory(dict)

    def __attrs_post_init__(self) -> None:
        self.functions = scan.functions_by_qualname(self.tree)
        self.targets = {}
        found = find_calls(self.module, self.tree, self.index)  # type: ignore[arg-type]  # searched once per run
        stream = {site.call: site.key for site in found}
        for qualname, fn in self.functions.items():
            for stmt in statements(fn):
                for call in own_calls(stmt):
                    target = self._stream_target(stream.get(call)) or self._plain_target(call, qualname, fn)
                    if target is not None:
                        self.targets[call] = target

    def issued(self, stmt: ast.stmt) -> frozenset[str]:
        """The functions of the module that running ``stmt`` itself (not its nested blocks) may run."""
        return frozenset().union(*(self.runs(self.targets[c]) for c in own_calls(stmt) if c in self.targets))

    def runs(self, qualname: str) -> frozenset[str]:
        """``qualname`` and every function of the module a call of it may run, through the calls it makes."""
        if qualname not in self._runs:
            found, todo = {qualname}, [qualname]
            while todo:
                more = self._direct(todo.pop()) - found
                found |= more
                todo += more
            self._runs[qualname] = frozenset(found)
        return self._runs[qualname]

    def _direct(self, qualname: str) -> set[str]:
        return {
            self.targets[c] for s in statements(self.functions[qualname]) for c in own_calls(s) if c in self.targets
        }

    def called(self, qualname: str) -> bool:
        """The module calls ``qualname`` somewhere the graph resolves."""
        return qualname in self.targets.values()

    def escaping(self) -> frozenset[str]:
        """The functions that may run where this graph does not show it (see the module's docstring)."""
        named = {_name(node) for node in self._unresolved()}
        found = {q for q in self.functions if q.rpartition(".")[2] in named}
        classes = {q.partition(".")[0] for q in self.functions if "." in q}
        return frozenset(found | {q for q in self.functions if q.partition(".")[0] in self._named_classes(classes)})

    def _unresolved(self) -> Iterator[ast.Attribute | ast.Name]:
        resolved = {id(call.func) for call in self.targets}
        for node in walked(self.tree):
            if isinstance(node, (ast.Attribute, ast.Name)) and id(node) not in resolved:
                yield node

    def _named_classes(self, classes: set[str]) -> set[str]:
        """The classes of the module named anywhere but in a submodule assignment the index knows."""
        known = {id(call.func) for call in self._submodule_calls()}
        return {n.id for n in walked_of(self.tree, ast.Name) if n.id in classes and id(n) not in known}

    def _submodule_calls(self) -> Iterator[ast.Call]:
        for node in walked_of(self.tree, ast.ClassDef):
            made = set(self.index.submodules.get(f"{self.module}:{node.name}", {}).values())
            for call in walked_of(node, ast.Call):
                if isinstance(call.func, ast.Name) and call.func.id in made:
                    yield call

    def _stream_target(self, key: str | None) -> str | None:
        module, _, qualname = (key or "").partition(":")
        return qualname if module == self.module and qualname in self.functions else None

    def _plain_target(self, call: ast.Call, caller: str, fn: _Function) -> str | None:
        func = call.func
        if isinstance(func, ast.Name):
            return func.id if func.id in self.functions else None
        owner, receiver = caller.partition(".")[0], _receiver(caller, fn)
        if not isinstance(func, ast.Attribute) or receiver is None or "." not in caller:
            return None
        if _is_name(func.value, receiver):
            own = f"{owner}.{func.attr}"
            return own if own in self.functions else self._method(owner, func.attr, "forward")
        if isinstance(func.value, ast.Attribute) and _is_name(func.value.value, receiver):
            return self._method(owner, func.value.attr, func.attr)
        return None

    def _method(self, owner: str, attribute: str, method: str) -> str | None:
        cls = self.index.submodules.get(f"{self.module}:{owner}", {}).get(attribute)
        target = f"{cls}.{method}"
        return target if cls is not None and target in self.functions else None


def statements(fn: _Function) -> Iterator[ast.stmt]:
    """Every statement of ``fn``'s own scope, nested blocks included (not nested definitions' bodies)."""
    stack: list[ast.stmt] = list(reversed(fn.body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in _BLOCKS:
            for child in reversed(getattr(stmt, field, ()) or ()):
                stack.extend(child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child])


def _name(node: ast.Attribute | ast.Name) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _receiver(qualname: str, fn: _Function) -> str | None:
    positional = [*fn.args.posonlyargs, *fn.args.args]
    return positional[0].arg if "." in qualname and positional else None
