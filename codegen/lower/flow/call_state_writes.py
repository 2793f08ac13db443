"""What of objects' state a call writes in place through the function it runs, named as a planned call's state
reads are (``self.buf``, ``self.sub.scale``, ``self.sub.*``).

A call writes state as surely by what it runs as by how it is spelled (``written_exprs.py``), and the caller's
tensors and its objects' state are read the same way: ``double(self.buf)`` where the module's ``def double(t):
t.mul_(2)`` writes its parameter, ``helpers.double(self.buf)`` from another module of the run, ``torch.relu_(self.buf)``
by its ATen schema, ``extlib.fill(self.buf)`` of a module the run cannot read (every argument) write ``self.buf``
(the arguments ``param_writes.written_arguments`` says are written; an object given whole may be written anywhere:
``self.sub.*``). A method called through the object writes what its body writes of its own object, renamed to the
caller's chain: ``self.sub.double()`` whose ``def double(self): self.scale.mul_(2)`` writes ``self.sub.scale``,
``self.bump()`` of the caller's class writing ``self.buf`` writes ``self.buf``; its body's own calls are read the
same way, method after method (a cycle is read once; past a depth, the whole object).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import attrs

from codegen.frontend.signature import signature_of
from codegen.index.per_index import per_run
from codegen.index.scan import dotted_name
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.param_writes import resolved_function, written_arguments
from codegen.lower.flow.state_access import writes_state
from codegen.lower.flow.view_roots import alias_parts, alias_root
from codegen.lower.flow.written_exprs import attribute_chain

__all__ = ["Scope", "call_state_writes", "method_state_writes"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Reached = tuple[_Function, Mapping[str, _Function], str | None]
_DEPTH = 8  # methods followed one inside another at most; a call deeper may write anything of its object


@attrs.frozen
class Scope:
    """Where a function's calls are read: its module's functions (``imported_writes.ModuleFunctions`` reaches the
    run's other modules), the class it is defined in and its receiver (``self``); ``unread``: a function the run
    cannot read writes the state it is given (the caller's statements), or nothing (what the index says of a
    stream function's body, as it did before: its state written by the functions the run reads)."""

    functions: Mapping[str, _Function]
    owner: str | None
    receiver: str | None
    unread: bool = True


def call_state_writes(call: ast.Call, scope: Scope, seen: frozenset[_Function] = frozenset()) -> frozenset[str]:
    """The attribute chains whose memory ``call`` (in ``scope``) writes in place through the function it runs (see
    above); ``seen``: the methods being read, one inside another."""
    given = [a for a in [*call.args, *(k.value for k in call.keywords)] if _given(a, scope.receiver)]
    read = given and (scope.unread or resolved_function(call, scope.functions, scope.owner, scope.receiver))
    args = written_arguments(call, scope.functions, scope.owner, scope.receiver) if read else []
    found = {chain for arg in args for chain in _given(arg, scope.receiver)}
    method = _method_of_object(call, scope)
    if method is not None and method[1][0] not in seen:
        writes = _method_writes(method[1], seen, scope.unread) if seen else _read_once(method[1], scope.unread)
        found |= {f"{method[0]}.{attr}" for attr in writes}
    return frozenset(found)


def method_state_writes(fn: _Function, functions: Mapping[str, _Function], owner: str) -> frozenset[str]:
    """The attributes of its object the method ``fn`` of class ``owner`` changes, its body's calls' writes included
    (see above), named as ``state_access.writes_state`` names them: the first attribute (``sub`` for
    ``self.sub.scale``; ``*``: any); what a function the run cannot read may write is left out (``Scope.unread``)."""
    return frozenset(chain.split(".")[0] for chain in _read_once((fn, functions, owner), unread=False))


def _given(arg: ast.expr, receiver: str | None) -> set[str]:
    """The state an argument written by the function it goes to may be: its chain, and, for an object given whole,
    any of its attributes (``self.sub``: ``self.sub.*``; the caller's object itself: ``self.*``); a tensor's
    metadata (``self.buf.shape[0]``) is none of its memory."""
    found: set[str] = set()
    for part in alias_parts(arg):
        chain = attribute_chain(part) if alias_root(part) is not None else None
        if chain is not None:
            found |= {chain, f"{chain}.*"}
        elif isinstance(part, ast.Name) and part.id == receiver:
            found.add(f"{receiver}.*")
    return found


def _method_of_object(call: ast.Call, scope: Scope) -> tuple[str, _Reached] | None:
    """The caller's chain of the object a method is called on (``self``, ``self.sub``; ``self.norm`` for its
    ``forward``), and the method, where the run reads it."""
    chain = dotted_name(call.func)
    parts = chain.split(".") if chain else []
    if scope.owner is None or len(parts) not in (2, 3) or parts[0] != scope.receiver:
        return None
    reached = resolved_function(call, scope.functions, scope.owner, scope.receiver)
    if reached is None or reached[2] is None:
        return None
    held = parts[:-1] if reached[0].name == parts[-1] else parts
    return ".".join(held), reached


def _method_writes(reached: _Reached, seen: frozenset[_Function], unread: bool) -> frozenset[str]:
    """The attributes of its object a method changes (``buf``, ``sub.scale``; ``*``: any): its body's own writes
    (``state_access.writes_state``), and those of the calls it makes, read the same way."""
    fn, functions, owner = reached
    receiver = signature_of(fn, method=True).receiver
    if receiver is None:
        return frozenset()
    if len(seen) >= _DEPTH:
        return frozenset({"*"})
    inner, prefix = Scope(functions, owner, receiver, unread), f"{receiver}."
    calls = {chain for call in walked_of(fn, ast.Call) for chain in call_state_writes(call, inner, seen | {fn})}
    return _own_writes(fn) | {c.removeprefix(prefix) for c in calls if c.startswith(prefix)}


def _read_once(reached: _Reached, unread: bool) -> frozenset[str]:
    """:func:`_method_writes` of a method read first (none being read around it), once per run index."""
    functions = reached[1]
    if not isinstance(functions, ModuleFunctions):
        return _method_writes(reached, frozenset(), unread)
    known = _known(functions.index)
    found = known.get((reached[0], unread))
    if found is None:
        found = known[(reached[0], unread)] = _method_writes(reached, frozenset(), unread)
    return found


@per_run
def _known(index: object) -> dict[tuple[_Function, bool], frozenset[str]]:
    """The methods' writes read for the run ``index`` (the last run asked about only)."""
    return {}


@per_node
def _own_writes(fn: _Function) -> frozenset[str]:
    return writes_state(fn, signature_of(fn, method=True).receiver)[0]
