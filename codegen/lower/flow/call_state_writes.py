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
same way, method after method (a cycle is read once; past a depth, the whole object). A method of the object the
run cannot read (a base from outside the run) may write any of it (``unread_methods.py``: ``self.*``). The same
reading serves the caller's statements (``state_writes.py``) and a stream function's body (the index,
``method_state_writes``): a side body giving ``self.buf`` to a function the run cannot read changes it for the
caller. An attribute that surely holds no tensor (``self.rope_dim = 3``: ``scalar_attributes.py``) is no memory
a function writes.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import attrs

from codegen.frontend.signature import signature_of
from codegen.index.per_index import per_run
from codegen.index.scan import dotted_name
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.handed_writes import handed_body_writes
from codegen.lower.flow.held_state_calls import held_state_calls
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.param_writes import resolved_function, written_arguments
from codegen.lower.flow.scalar_attributes import plain_state
from codegen.lower.flow.state_access import inplace_state, writes_state
from codegen.lower.flow.torch_module_methods import runs_forward
from codegen.lower.flow.unread_methods import unread_method_writes
from codegen.lower.flow.view_roots import alias_parts, alias_root
from codegen.lower.flow.written_exprs import attribute_chain

__all__ = ["Scope", "call_state_writes", "method_state_writes"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Reached = tuple[_Function, Mapping[str, _Function], str | None]
_DEPTH = 8  # methods followed one inside another at most; a call deeper may write anything of its object


@attrs.frozen
class Scope:
    """Where a function's calls are read: its module's functions (``imported_writes.ModuleFunctions`` reaches the
    run's other modules), the class it is defined in and its receiver (``self``); ``stores``: a method's store to an
    attribute (``self.buf = t``) counts as a change (what a stream function's body leaves for its caller to read),
    or not (the caller's statements: a store points the attribute at another tensor and writes none a pending call
    reads, ``state_access.inplace_state``)."""

    functions: Mapping[str, _Function]
    owner: str | None
    receiver: str | None
    stores: bool = False


def call_state_writes(call: ast.Call, scope: Scope, seen: frozenset[_Function] = frozenset()) -> frozenset[str]:
    """The attribute chains whose memory ``call`` (in ``scope``) writes in place through the function it runs (see
    above); ``seen``: the methods being read, one inside another."""
    given = [a for a in [*call.args, *(k.value for k in call.keywords)] if _given(a, scope.receiver)]
    args = written_arguments(call, scope.functions, scope.owner, scope.receiver) if given else []
    found = _unplain({chain for arg in args for chain in _given(arg, scope.receiver)}, scope)
    method = _method_of_object(call, scope)
    if method is not None and method[1][0] not in seen:
        reading = (method[1], scope.stores)
        writes = _method_writes(*reading, seen) if seen else _read_once(*reading)
        found |= {f"{method[0]}.{attr}" for attr in writes}
    elif method is None:
        found |= unread_method_writes(call, scope.functions, scope.owner, scope.receiver)
    return frozenset(found)


def method_state_writes(fn: _Function, functions: Mapping[str, _Function], owner: str) -> frozenset[str]:
    """The attributes of its object the method ``fn`` of class ``owner`` changes, its body's calls' writes included
    (see above), named as ``state_access.writes_state`` names them: the first attribute (``sub`` for
    ``self.sub.scale``; ``*``: any)."""
    return frozenset(chain.split(".")[0] for chain in _read_once((fn, functions, owner), stores=True))


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


def _unplain(chains: set[str], scope: Scope) -> set[str]:
    """``chains`` but the attributes of the caller's object that surely hold no tensor (``self.rope_dim``:
    ``scalar_attributes.py``), whose memory no function writes."""
    plain = plain_state(scope.functions, scope.owner) if chains else frozenset()
    return {c for c in chains if not _plain(c, scope.receiver, plain)}


def _plain(chain: str, receiver: str | None, plain: frozenset[str]) -> bool:
    """``chain`` is ``receiver.attr`` (or of its own attributes) of an attribute in ``plain``."""
    root, _, rest = chain.partition(".")
    return root == receiver and rest.partition(".")[0] in plain


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
    method = reached[0].name == parts[-1] or runs_forward(parts[-1])  # ``self._call_impl(x)`` runs ``forward``
    held = parts[:-1] if method else parts
    return ".".join(held), reached


def _method_writes(reached: _Reached, stores: bool, seen: frozenset[_Function]) -> frozenset[str]:
    """The attributes of its object a method changes (``buf``, ``sub.scale``; ``*``: any): its body's own writes
    (``state_access.writes_state``), and those of the calls it makes, read the same way."""
    fn, functions, owner = reached
    receiver = signature_of(fn, method=True).receiver
    if receiver is None:
        return frozenset()
    if len(seen) >= _DEPTH:
        return frozenset({"*"})
    inner, prefix = Scope(functions, owner, receiver, stores), f"{receiver}."
    calls = {chain for call in walked_of(fn, ast.Call) for chain in call_state_writes(call, inner, seen | {fn})}
    own = (_own_writes(fn) if stores else _own_inplace(fn)) | held_state_calls(fn, inner)  # ``v = self.c; th.relu_(v)``
    own |= handed_body_writes(fn, inner)  # ``self.sub.buf().add_(1)``: what a call it makes hands out
    return own | {c.removeprefix(prefix) for c in calls if c.startswith(prefix)}


def _read_once(reached: _Reached, stores: bool) -> frozenset[str]:
    """:func:`_method_writes` of a method read first (none being read around it), once per run index."""
    functions = reached[1]
    if not isinstance(functions, ModuleFunctions):
        return _method_writes(reached, stores, frozenset())
    known = _known(functions.index)
    found = known.get((reached[0], stores))
    if found is None:
        found = known[(reached[0], stores)] = _method_writes(reached, stores, frozenset())
    return found


@per_run
def _known(index: object) -> dict[tuple[_Function, bool], frozenset[str]]:
    """The methods' writes read for the run ``index`` (the last run asked about only)."""
    return {}


@per_node
def _own_writes(fn: _Function) -> frozenset[str]:
    return writes_state(fn, signature_of(fn, method=True).receiver)[0]


@per_node
def _own_inplace(fn: _Function) -> frozenset[str]:
    return inplace_state(fn, signature_of(fn, method=True).receiver)
