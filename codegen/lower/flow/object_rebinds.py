"""Which attributes of its object a function points elsewhere, spelled or through the functions it calls.

``rebound_state.py`` keeps a tensor the caller made and stored on its object before a side call that reads it,
where the caller points the attribute elsewhere after the call: the store may be spelled (``self.stash = z``,
``self.sub.stash = z``, ``setattr(self, "stash", z)``), or made by a function the caller gives the object to: a
method of it (``self.swap(z)``), of one of its objects (``self.sub.swap(z)``: ``sub.stash``), a method such a method
calls in turn (``self.reset()`` calling ``self._clear()``), or a function of the run given the object
(``put(self, z)`` with ``def put(obj, t): obj.stash = t``). Each store is named by its chain under the caller's
object (``stash``, ``sub.stash``); ``*`` stands for any attribute (a ``setattr`` of a computed name, ``sub.*``
of ``self.sub``). Functions are followed where the run reads them (``param_writes.resolved_function``), a cycle
once, and past a depth any attribute is taken as stored. A function the run cannot read given the object (an
import's ``extlib.put(self, z)``), or a method of it the run cannot read (``unread_methods.py``), may store any of
its attributes: the planner joins the side call before it (it may write the object's state), but that is too late
for the tensor's memory, which the caller's stream may reuse between the side read and the join.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping

from codegen.index.per_index import per_run
from codegen.index.scan import dotted_name
from codegen.index.walked import walked_of
from codegen.lower.flow.attribute_stores import object_stores
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.param_writes import resolved_function
from codegen.lower.flow.torch_module_methods import runs_forward
from codegen.lower.flow.unread_methods import unread_method_writes

__all__ = ["rebound_chains"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Functions = Mapping[str, _Function]
_Reached = tuple[_Function, _Functions, str | None]
_DEPTH = 8  # functions followed one inside another at most; a store deeper may be of any attribute


def rebound_chains(
    fn: _Function, receiver: str, where: Callable[[ast.AST], bool], functions: _Functions, owner: str | None
) -> set[str]:
    """The chains under ``receiver`` that ``fn`` (a method of class ``owner``) stores at the nodes ``where`` takes,
    itself or through the functions it calls there (see above)."""
    found = {chain for chain, node in _spelled(fn, receiver) if where(node)}
    for call in walked_of(fn, ast.Call):
        if where(call):
            found |= _through_once(call, receiver, functions, owner)
    return found


def _through_once(call: ast.Call, receiver: str, functions: _Functions, owner: str | None) -> frozenset[str]:
    """:func:`_through` of a call of the caller, read once per run (each of its sites asks again)."""
    if not isinstance(functions, ModuleFunctions):
        return frozenset(_through(call, receiver, functions, owner, frozenset()))
    known = _known(functions.index)
    found = known.get((call, receiver))
    if found is None:
        found = known[(call, receiver)] = frozenset(_through(call, receiver, functions, owner, frozenset()))
    return found


@per_run
def _known(index: object) -> dict[tuple[ast.Call, str], frozenset[str]]:
    """The calls' stores read for the run ``index`` (the last run asked about only)."""
    return {}


def _spelled(fn: _Function, receiver: str) -> Iterator[tuple[str, ast.AST]]:
    """Each chain ``fn`` stores under ``receiver`` by its own statements, with the node storing it."""
    for store in object_stores(fn, receiver):
        yield store.attr, store.node
    for node in walked_of(fn, ast.Attribute):
        held = _under(node.value, receiver) if not isinstance(node.ctx, ast.Load) else None
        if held:  # ``self.sub.stash = z``: ``sub.stash``
            yield f"{held}.{node.attr}", node


def _through(call: ast.Call, receiver: str, functions: _Functions, owner: str | None, seen: frozenset) -> set[str]:
    """The chains under ``receiver`` the function ``call`` runs stores, given the object or one of its objects."""
    if not _touches(call, receiver):
        return set()  # ``torch.cat(xs)``: given nothing of the object, called on none of it
    reached = resolved_function(call, functions, owner, receiver)
    if reached is None:
        return _unread(call, receiver, functions, owner)
    if reached[0] in seen:
        return set()
    if len(seen) >= _DEPTH:
        return {"*"}
    fn, inner, home = reached
    found: set[str] = set()
    for prefix, param in _objects_given(call, reached, receiver):
        chains = {c for c, _ in _spelled(fn, param)}
        chains |= {c for later in walked_of(fn, ast.Call) for c in _through(later, param, inner, home, seen | {fn})}
        found |= {f"{prefix}{c}" for c in chains}
    return found


def _touches(call: ast.Call, receiver: str) -> bool:
    """``call`` is made on the object or one of its attributes, or given one of them."""
    given = [a for a in [*call.args, *(k.value for k in call.keywords)] if not isinstance(a, ast.Starred)]
    on_object = (dotted_name(call.func) or ".").split(".")[0] == receiver
    return on_object or any(_under(a, receiver) is not None for a in given)


def _unread(call: ast.Call, receiver: str, functions: _Functions, owner: str | None) -> set[str]:
    """What a function the run cannot read may store: any attribute of the object, or of one of its objects, it is
    given (``extlib.put(self, z)``: ``*``) or called on (a method a base outside the run defines)."""
    given = [a for a in [*call.args, *(k.value for k in call.keywords)] if not isinstance(a, ast.Starred)]
    root = (dotted_name(call.func) or ".").split(".")[0]
    imported = isinstance(functions, ModuleFunctions) and functions.binding(root) is not None
    held = [h for a in given if (h := _under(a, receiver)) is not None] if imported else []
    found = {f"{h}.*" if h else "*" for h in held}
    written = unread_method_writes(call, functions, owner, receiver)
    return found | {c.removeprefix(f"{receiver}.") for c in written if c.endswith("*")}


def _objects_given(call: ast.Call, reached: _Reached, receiver: str) -> Iterator[tuple[str, str]]:
    """(the chain prefix under ``receiver``, the parameter of the function reached holding it) for the object the
    call is made on (a method's ``self``) and each argument that is the object or one of its attributes."""
    fn, _, home = reached
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    parts = (dotted_name(call.func) or "").split(".")
    bound = home is not None and len(parts) > 1 and parts[0] == receiver and bool(params)
    if bound:
        method = fn.name == parts[-1] or runs_forward(parts[-1])  # ``self.norm(x)``, ``._call_impl(x)``: ``forward``
        held = parts[1:-1] if method else parts[1:]
        yield "".join(f"{p}." for p in held), params[0]
    given = [*zip(params[1:] if bound else params, call.args, strict=False)]
    given += [(k.arg, k.value) for k in call.keywords if k.arg in params]
    for param, arg in given:
        held_arg = _under(arg, receiver) if not isinstance(arg, ast.Starred) else None
        if held_arg is not None:
            yield (f"{held_arg}." if held_arg else ""), param


def _under(node: ast.expr, receiver: str) -> str | None:
    """The chain of attributes ``node`` names under ``receiver`` (``""``: the object itself; ``sub``: ``self.sub``),
    None where it is not one."""
    chain = dotted_name(node)
    parts = chain.split(".") if chain else []
    return ".".join(parts[1:]) if parts and parts[0] == receiver else None
