"""Whether a stream function's body may change what a guard read from its object says (``when="self.on"``).

A call site reads its guard at the fork and again at the join: where the body changed the value between, the
fork ran on the side stream and the join's wait is skipped, and the caller reads the result unsynchronized.
So a body flips its guard not only by assigning it (``self.on = False``) but by anything that may change the
object's state unseen: a method of its own that does (``self.off()``, followed through the module's methods, one
after another), the object handed on whole
(``turn_off(self)``, ``me = self``, ``setattr(self, ...)``, ``vars(self)``), its ``__dict__``, or a store to an
attribute the class defines as a property (its setter may set anything). A call of an attribute the module
defines no method for is taken for another object's (``self.proj(x)``, also a submodule a base class in another
file makes: counting those would keep every such class's calls apart); so a method inherited from another file
that flips the flag is not seen.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import attrs

from codegen.frontend.signature import signature_of
from codegen.index import scan
from codegen.index.walked import walked_of

__all__ = ["changed_state", "may_flip"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Functions = Mapping[str, _Function]


def may_flip(fn: _Function, guard: str, functions: _Functions, owner: str | None) -> bool:
    """``fn``'s body may change ``guard`` (a dotted name in its own terms); ``functions``: the module's by
    qualname, ``owner``: the class ``fn`` is defined in."""
    if scan.assigns_path(fn, guard):
        return True
    root, _, rest = guard.partition(".")
    if root != signature_of(fn, method=owner is not None).receiver:
        return False
    changed = changed_state(fn, functions, owner)
    return "*" in changed or rest.split(".")[0] in changed


def changed_state(fn: _Function, functions: _Functions, owner: str | None) -> frozenset[str]:
    """The attributes of its object the body, or a method of the object it calls, may assign (``self.on = ...``,
    ``self.cfg.on = ...``: ``on``, ``cfg``); ``"*"`` where it may change any (see above)."""
    return frozenset(_changes(fn, _Search(functions, owner), frozenset()))


@attrs.frozen
class _Search:
    functions: _Functions
    owner: str | None


def _changes(fn: _Function, search: _Search, seen: frozenset) -> set[str]:
    receiver = signature_of(fn, method=search.owner is not None).receiver
    if receiver is None or search.owner is None:
        return set()
    chained = {id(n.value) for n in walked_of(fn, ast.Attribute)}
    if any(n.id == receiver and id(n) not in chained for n in walked_of(fn, ast.Name)):
        return {"*"}  # the object handed on whole, or bound to another name
    found = {path.split(".")[1] for path in scan.stored_paths(fn) if path.startswith(f"{receiver}.")}
    if "__dict__" in _read(fn, receiver) or any(_property(search.functions, search.owner, a) for a in found):
        return {"*"}
    for call in walked_of(fn, ast.Call):
        attribute = call.func
        if not (isinstance(attribute, ast.Attribute) and _on(attribute, receiver)):
            continue
        method = search.functions.get(f"{search.owner}.{attribute.attr}")
        if method is not None and method not in seen:  # not one the module defines: another object's (above)
            found |= _changes(method, search, seen | {fn})
    return found


def _read(fn: _Function, receiver: str) -> set[str]:
    """The attributes of the object ``fn`` reads (``self.__dict__``)."""
    return {n.attr for n in walked_of(fn, ast.Attribute) if _on(n, receiver)}


def _on(node: ast.Attribute, receiver: str) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id == receiver


def _property(functions: _Functions, owner: str | None, attr: str) -> bool:
    """The class defines ``attr`` as a property (a setter may set anything)."""
    method = functions.get(f"{owner}.{attr}")
    return method is not None and any(
        isinstance(d, ast.Name) and d.id == "property" or isinstance(d, ast.Attribute) and d.attr == "setter"
        for d in method.decorator_list
    )
