"""What a statement writes in place of its object's state through what a call hands out: ``self.sub.buf().add_(1)``.

The spelling of a write names what it writes by the chain under it (``written_exprs.py``); a chain whose root is a
call (``self.sub.buf()``, ``self.get_submodule("sub").b``, ``self.sub.first()[0]``) or that reads a property
(``self.sub.prop``) reached no state, and its write ran while a side call still read ``self.sub.b``. The state such a
write reaches is what the call hands out (``handed_results.py``), named as a pending call's reads are
(``self.sub.b`` and ``self.sub.b.*``; ``self.*``: any). A stream function's body is read the same way, with its
locals bound to such results (``t = self.sub.buf(); t.add_(1)``: ``held_paths.py`` given the body's scope), so the
caller's later read of ``self.sub.b`` waits for it (``call_state_writes.method_state_writes``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.index.walked import walked_of
from codegen.lower.flow.handed_results import value_paths
from codegen.lower.flow.held_paths import held_paths
from codegen.lower.flow.view_roots import alias_root
from codegen.lower.flow.written_exprs import node_written

if TYPE_CHECKING:
    from codegen.lower.flow.call_state_writes import Scope

__all__ = ["handed_body_writes", "handed_writes"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_WRITERS = (ast.AugAssign, ast.Assign, ast.AnnAssign, ast.Call)  # the nodes ``node_written`` reads a write of


def handed_writes(stmt: ast.stmt, scope: Scope) -> frozenset[str]:
    """The chains of ``scope.receiver``'s state ``stmt`` writes in place through what a call it writes through
    hands out (``self.sub.buf().add_(1)``, ``self.get_buffer("b").mul_(2)``) or a property (``self.sub.prop``)."""
    receiver = scope.receiver
    if receiver is None:
        return frozenset()
    return frozenset(chain for path in _written(stmt, scope) for chain in _chains(receiver, path))


def _written(stmt: ast.stmt, scope: Scope) -> set[str]:
    return {p for node in walked_of(stmt, _WRITERS) for e in node_written(node) for p in value_paths(e, scope)}


def handed_body_writes(fn: _Function, scope: Scope) -> frozenset[str]:
    """The paths of its own object a method's body writes in place through what its calls hand out, inline or
    through a local holding it (``t = self.sub.buf(); t.add_(1)``: ``sub.b``); a store (``t.x = v``) writes none."""
    receiver = scope.receiver
    if receiver is None:
        return frozenset()
    held = held_paths(fn, receiver, scope)
    found: set[str] = set()
    for stmt in walked_of(fn, ast.stmt):
        roots = {alias_root(e) for node in walked_of(stmt, _WRITERS) for e in node_written(node)}
        found |= _written(stmt, scope) | {p for name in held.keys() & roots for p in held[name]}
    return frozenset(found)


def _chains(receiver: str, path: str) -> tuple[str, ...]:
    """A path as the chains a pending call's reads are named by: itself and any of its own attributes."""
    return (f"{receiver}.*",) if path == "*" else (f"{receiver}.{path}", f"{receiver}.{path}.*")
