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
from collections.abc import Mapping

from codegen.index.walked import walked, walked_of
from codegen.lower.flow.object_rebinds import rebound_chains
from codegen.lower.flow.paths_meet import meets, under
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
    after = rebound_chains(fn, receiver, lambda node: _position(node) > _position(call), functions, owner)
    if not after:
        return ()  # nothing pointed elsewhere after the call: most callers
    looped = _loops_around(fn, call)  # a store in a loop around the call runs before its next run too
    before = rebound_chains(fn, receiver, lambda n: _position(n) < _position(call) or n in looped, functions, owner)
    kept = _both(before, after, reads)
    plain = plain_state(functions, owner) if kept else frozenset()
    return tuple(f"{receiver}.{c}" for c in sorted(kept) if _read(c, reads) and c not in plain)


def _both(before: set[str], after: set[str], reads: frozenset[str]) -> set[str]:
    """The chains stored both before and after the call, the narrower of two that meet (``paths_meet.under``): ``*``
    (a computed ``setattr``) meets any chain, ``sub.*`` or ``sub`` any of ``sub``'s (a store of ``self.sub`` drops
    the object holding ``sub.stash``); where both sides may store any attribute, each the call reads by name (one
    reading any of them names none to keep)."""
    found = {b for a in before for b in after if _covers(a, b)} | {a for a in before for b in after if _covers(b, a)}
    return {c for c in found | (reads if "*" in found else frozenset()) if not c.endswith("*")}


def _covers(wide: str, chain: str) -> bool:
    return wide == chain or under(chain, wide)


def _read(chain: str, reads: frozenset[str]) -> bool:
    """The call reads ``chain``: a path its body reads meets it (``body_reads.callee_reads``; ``*``: any)."""
    return "*" in reads or any(meets(chain, r) for r in reads)


def _of_object(call: ast.Call, receiver: str) -> bool:
    """``self.side(x)``: a method of the caller's own object."""
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == receiver


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _loops_around(fn: _Function, call: ast.Call) -> set[ast.AST]:
    """The nodes of the loops of ``fn`` the call runs in."""
    loops = [loop for loop in walked_of(fn, (ast.For, ast.AsyncFor, ast.While)) if call in walked_of(loop, ast.Call)]
    return {node for loop in loops for node in walked(loop)}
