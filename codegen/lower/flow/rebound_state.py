"""The state a side call reads that its caller made before the call and points elsewhere after it: kept alive.

``self.stash = x * 2``, then ``y = self.side(x)`` (whose body reads ``self.stash``), then ``self.stash = z`` (or
``self.swap(z)``, a method of the object storing it): the tensor ``x * 2`` was made on the caller's stream, and
once the attribute is pointed at ``z`` nothing holds it. In a captured graph its memory goes back to the caller's
stream after its last use, the side read, so the caller's next allocation may reuse it while the side stream
still reads it (the race checker: "made on stream 'default' ... read on stream 'side', then dropped, and stream
'default' allocates again"). The store after the call writes no memory the side call reads (``state_access.
inplace_state``): no join is needed, only ``record_stream(self.stash, "side")`` at the fork, as for any tensor the
caller makes and a side stream reads. An attribute the caller does not store before the call was made before this
call (construction state, or an earlier call's output: a graph input, alive throughout), and one it does not point
elsewhere after the call stays on the object (a graph output): neither needs a keep. An attribute that surely
holds no tensor (``scalar_attributes.py``) needs none either.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from codegen.index.walked import walked, walked_of
from codegen.lower.flow.scalar_attributes import plain_state

__all__ = ["rebound_keeps"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Functions = Mapping[str, _Function]


def rebound_keeps(
    fn: _Function, receiver: str | None, call: ast.Call, reads: frozenset[str], functions: _Functions, owner: str | None
) -> tuple[str, ...]:
    """The caller's attribute chains (``self.stash``) to keep for its call ``call`` of a method of its own object
    whose body reads ``reads`` of it (``*``: any), in the caller ``fn`` of class ``owner`` (see above)."""
    if receiver is None or not reads or not _of_object(call, receiver):
        return ()
    after = _changed(fn, receiver, lambda node: _position(node) > _position(call), functions, owner)
    if not after:
        return ()  # nothing pointed elsewhere after the call: most callers
    looped = _loops_around(fn, call)  # a store in a loop around the call runs before its next run too
    before = _changed(fn, receiver, lambda node: _position(node) < _position(call) or node in looped, functions, owner)
    kept = (before & after) - plain_state(functions, owner)
    return tuple(f"{receiver}.{a}" for a in sorted(kept) if "*" in reads or a in reads)


def _of_object(call: ast.Call, receiver: str) -> bool:
    """``self.side(x)``: a method of the caller's own object."""
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == receiver


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _stored(fn: _Function, receiver: str, where: Callable[[ast.AST], bool]) -> set[str]:
    """The attributes ``fn`` stores on its object (``self.a = ...``, ``del self.a``) at the nodes ``where`` takes."""
    return {
        node.attr
        for node in walked_of(fn, ast.Attribute)
        if not isinstance(node.ctx, ast.Load)
        and isinstance(node.value, ast.Name)
        and node.value.id == receiver
        and where(node)
    }


def _changed(
    fn: _Function, receiver: str, where: Callable[[ast.AST], bool], functions: _Functions, owner: str | None
) -> set[str]:
    """The attributes ``fn`` stores on its object at the nodes ``where`` takes, itself or through the methods of
    the object it calls there (``self.swap(z)``: what their bodies store)."""
    found = _stored(fn, receiver, where)
    for later in walked_of(fn, ast.Call):
        method = _method(later, receiver, functions, owner) if where(later) else None
        if method is not None and method.args.args:
            found |= _stored(method, method.args.args[0].arg, lambda _: True)
    return found


def _loops_around(fn: _Function, call: ast.Call) -> set[ast.AST]:
    """The nodes of the loops of ``fn`` the call runs in."""
    loops = [loop for loop in walked_of(fn, (ast.For, ast.AsyncFor, ast.While)) if call in walked_of(loop, ast.Call)]
    return {node for loop in loops for node in walked(loop)}


def _method(call: ast.Call, receiver: str, functions: _Functions, owner: str | None) -> _Function | None:
    """The method of the caller's class ``call`` runs (``self.swap(z)``), where the class defines it."""
    if owner is None or not isinstance(call.func, ast.Attribute) or not _of_object(call, receiver):
        return None
    return functions.get(f"{owner}.{call.func.attr}")
