"""Whether a guard reads one value at every fork and join of a caller: nothing in the caller assigns it.

The caller never assigns the guard's root (``self`` aside), nor an attribute along its path, once its first
planned call may run: a plain statement of the body's top level that ends before that line runs once, before
every fork and join, so every one of them reads the value it left (``multi_stream = self.enabled and not
prefill``). Nor may a planned call change the object the guard is read from unseen (``self.off()`` in its body,
``guard_flips.py``): the guard may read another value after it. What the statements bind and store is read once
per caller, then each guard is a set lookup.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any

import attrs

from codegen.index import scan
from codegen.lower.flow.exprs import bound_names

__all__ = ["Stability", "changed_objects"]


@attrs.define(eq=False)
class Stability:
    fn: ast.FunctionDef | ast.AsyncFunctionDef
    changed: frozenset[str] = frozenset()  # objects a planned call may change unseen (``self``: ``guard_flips.py``)
    _seen: dict[int, tuple[frozenset[str], frozenset[str]]] = attrs.field(factory=dict, init=False)

    def stable(self, expr: str, since: int = 0) -> bool:
        """``expr`` (a dotted guard) holds one value from line ``since`` on."""
        bound, stored = self._assigned(since)
        root = expr.split(".")[0]
        return not (root != "self" and root in bound) and not scan.on_path(stored | self.changed, expr)

    def unchanged(self, expr: str, since: int = 0) -> bool:
        """Nothing from line ``since`` on stores to ``expr`` or what holds it (its root may be bound again)."""
        return not scan.on_path(self._assigned(since)[1] | self.changed, expr)

    def _assigned(self, since: int) -> tuple[frozenset[str], frozenset[str]]:
        """The names the statements from ``since`` on bind, and the dotted targets they store to."""
        if since not in self._seen:
            bound: set[str] = set()
            stored: set[str] = set()
            for stmt in self.fn.body:
                if not hasattr(stmt, "body") and (stmt.end_lineno or stmt.lineno) < since:
                    continue
                bound |= bound_names(stmt)
                stored |= scan.stored_paths(stmt)
            self._seen[since] = (frozenset(bound), frozenset(stored))
        return self._seen[since]


def changed_objects(sites: Iterable[Any]) -> frozenset[str]:
    """What planned calls may assign of the objects they are called on, as the caller spells it (``self.on``;
    ``self`` where a call may change any of its object's state)."""
    found: set[str] = set()
    for site in sites:
        receiver, changed = site.call.resolved.receiver, site.callee.changes_state
        if receiver:
            found |= {receiver} if "*" in changed else {f"{receiver}.{attribute}" for attribute in changed}
    return frozenset(found)
