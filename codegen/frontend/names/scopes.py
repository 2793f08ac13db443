"""A scope's name state for the name flow: what each name may hold now, and what it ever held.

Kept apart from the walk (``name_flow``) because branches, loops and ``try``
all join and widen these states the same way; the walk only says when.
"""

from __future__ import annotations

import attrs

from codegen.frontend.names import bindings
from codegen.frontend.names.bindings import STAR, UNBOUND
from codegen.frontend.names.sites import Site

__all__ = ["NOTHING", "Scope", "Values", "decorator_aliases", "npudsl_modules", "outer", "reachable", "since", "widen"]

Values = frozenset[str]
NOTHING: Values = frozenset({UNBOUND})


@attrs.define(eq=False)
class Scope:
    kind: str  # "module", "class" or "function"
    parent: Scope | None
    state: dict[str, Values] = attrs.Factory(dict)
    ever: dict[str, set[str]] = attrs.Factory(dict)
    journal: list[tuple[str, Values]] = attrs.Factory(list)
    declared: dict[str, str] = attrs.Factory(dict)  # function: name -> "global" / "nonlocal"
    local: frozenset[str] = frozenset()
    sites: dict[str, list[Site]] | None = None

    def missing(self, state: dict[str, Values]) -> Values:
        return NOTHING | {STAR} if "*" in state else NOTHING

    def merge(self, *states: dict[str, Values]) -> dict[str, Values]:
        names = {name for state in states for name in state}
        return {name: frozenset().union(*(s.get(name, self.missing(s)) for s in states)) for name in names}


def outer(scope: Scope) -> Scope:
    """The scope whose names ``scope`` sees next: class bodies are skipped (the module is never one)."""
    found = scope.parent
    while found is not None and found.kind == "class":
        found = found.parent
    assert found is not None
    return found


def reachable(scope: Scope) -> bool:
    """No function encloses ``scope``: the rewriter may meet its decorators."""
    while scope.parent is not None:
        if scope.kind == "function":
            return False
        scope = scope.parent
    return True


def since(scope: Scope, mark: int) -> dict[str, Values]:
    """Every value bound in ``scope`` since ``mark``, by name."""
    found: dict[str, Values] = {}
    for name, values in scope.journal[mark:]:
        found[name] = found.get(name, frozenset()) | values
    return found


def widen(state: dict[str, Values], extra: dict[str, Values], missing: Values) -> dict[str, Values]:
    """``state`` where each name of ``extra`` may also have its values."""
    return {**state, **{name: state.get(name, missing) | values for name, values in extra.items()}}


def decorator_aliases(module: Scope) -> dict[str, str]:
    """Module names ever bound to an npudsl decorator: name -> the decorator."""
    found = {}
    for name, values in module.ever.items():
        for value in values:
            if decorator := bindings.decorator_of(value):
                found[name] = decorator
    return found


def npudsl_modules(module: Scope) -> frozenset[str]:
    """Module names ever bound to the npudsl package or its decorators module."""
    return frozenset(name for name, values in module.ever.items() if values & {"npudsl", "npudsl.decorators"})
