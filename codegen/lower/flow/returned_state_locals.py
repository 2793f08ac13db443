"""Which locals of a caller hold its object's state that a method of the object returns: ``ys = self.pair(x)``
where ``pair`` ends in ``return [self.a, self.b]``.

``ys[0]`` *is* ``self.a``: ``ys[0].add_(1)``, ``for t in ys: t.mul_(2)`` and ``y = self.get(); y.add_(1)`` (``get``
returning ``self.a``) write the object's state, as ``self.a.add_(1)`` does. The locals that hold state were those
bound to a chain of views of the object (``v = self.buf[0]``) or to what a method torch's ``nn.Module`` defines
hands out (``handed_state.py``): a method of the run returning its state was a call like any other, the write was
no write of ``self.a`` and ran while a side call still read it (a race the checker reports). A local bound to (or
iterating) a call of one of the object's own methods (``self.m(...)``, read where the run reads it:
``param_writes.resolved_function``), to a sum of such calls' results (``self.pair(x) + self.pair(y)``, lists
joined) or to an item or view of one, holds what that method's ``return`` values may be of its object: an attribute
chain of its receiver, or a local of its body that holds one (``held_paths.py``), each named by the path it holds.
``state_writes.StateWrites`` spreads these through the caller's views and copies as it does the others.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from codegen.frontend.signature import signature_of
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.call_state_writes import Scope
from codegen.lower.flow.changed_objects import object_path
from codegen.lower.flow.held_paths import held_paths
from codegen.lower.flow.param_writes import resolved_function
from codegen.lower.flow.value_views import copied, joined, operands
from codegen.lower.flow.view_roots import alias_parts, alias_root, flows, view_base

__all__ = ["caller_held_paths", "returned_state_locals"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def caller_held_paths(fn: _Function, scope: Scope) -> dict[str, frozenset[str]]:
    """The locals of the caller ``fn`` holding its object's state, with the paths (``held_paths.py``), these too."""
    return held_paths(fn, scope.receiver, scope, returned_state_locals(fn, scope)) if scope.receiver is not None else {}


def returned_state_locals(fn: _Function, scope: Scope) -> dict[str, frozenset[str]]:
    """Each local of ``fn`` bound to what a method of ``scope.receiver``'s object returns of that object's state,
    with the attribute paths (``"*"``: the object)."""
    found: dict[str, frozenset[str]] = {}
    if scope.receiver is None or scope.owner is None:
        return found
    for holders, value in flows(fn):
        paths = frozenset().union(*(_returned(call, scope) for call in _calls(value, scope.receiver)))
        for name in holders if paths else []:
            found[name] = found.get(name, frozenset()) | paths
    return found


def _calls(value: ast.expr, receiver: str) -> list[ast.Call]:
    """The calls of the object's methods whose results ``value`` may be or hold: the value itself, an item or view
    of it, an operand of a sum, an argument of a copy (``list(...)``)."""
    parts = operands(value) if joined(value) else copied(value) or [value]
    found: list[ast.Call] = []
    for part in parts:
        while not _method_call(part, receiver) and (below := view_base(part)) is not None:
            part = below  # ``self.pair(x)[0].view(-1)``: what the call returned, viewed
        if _method_call(part, receiver):
            found.append(part)
    return found


def _method_call(node: ast.expr, receiver: str) -> TypeGuard[ast.Call]:
    """``node`` is ``receiver.<name>(...)``."""
    func = node.func if isinstance(node, ast.Call) else None
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == receiver


def _returned(call: ast.Call, scope: Scope) -> frozenset[str]:
    """The paths of its object's state the method ``call`` runs may return (``"*"``: the object itself)."""
    callee = resolved_function(call, scope.functions, scope.owner, scope.receiver)
    return _returned_paths(callee[0]) if callee is not None and callee[2] is not None else frozenset()


@per_node
def _returned_paths(fn: _Function) -> frozenset[str]:
    """The paths of its object's state the method ``fn`` may return, read once per method."""
    receiver = signature_of(fn, method=True).receiver
    if receiver is None:
        return frozenset()
    held = held_paths(fn, receiver)
    values = [r.value for r in walked_of(fn, ast.Return) if r.value is not None]
    return frozenset(path for v in values for part in alias_parts(v) for path in _held(part, receiver, held))


def _held(part: ast.expr, receiver: str, held: dict[str, frozenset[str]]) -> frozenset[str]:
    root, path = alias_root(part), object_path(part)
    if root == receiver and path is not None:
        rest = path[len(root) + 1 :]
        return frozenset({rest.split(".*")[0] or "*"})
    return held.get(root, frozenset()) if root is not None else frozenset()
