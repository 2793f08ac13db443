"""How ``__init__`` builds each attribute of an object, where that makes a submodule (``object_state.py``).

``self.q_norm = RMSNorm(...)`` in ``__init__`` makes a submodule: one call of a class named at module level (not a
factory ``__init__`` is given, ``self.indexer = indexer(shape)``), its arguments handing on no part of the object
but its attributes (not ``Holder(self)``, nor a lambda or comprehension that could reach it). Every store to the
object is reported, in any method, so that an attribute stored again elsewhere counts as no submodule.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import attrs

from codegen.index import scan
from codegen.index.children import unordered_walk
from codegen.index.class_chain import class_of
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.init_locals import through_locals

__all__ = ["Built", "arguments", "bare", "built_call", "stores"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen
class Built:
    """How ``__init__`` builds an attribute: the call, the name of its object there, its locals made by calls."""

    call: ast.Call
    receiver: str
    made: frozenset[str]


@per_node
def stores(cls: ast.ClassDef) -> tuple[tuple[str, Built | None], ...]:
    """(attribute, how ``__init__`` builds it where that makes a submodule) for each store to the object;
    ``("*", None)`` for a ``setattr`` on it. Read once per class (each method of it, and of its subclasses, that
    calls a stream function asks)."""
    return tuple(_stores(cls))


def _stores(cls: ast.ClassDef) -> Iterator[tuple[str, Built | None]]:
    for fn in scan.functions_of(cls):
        receiver = fn.args.args[0].arg if fn.args.args else None
        made = _call_locals(fn) if fn.name == "__init__" else frozenset()  # only ``__init__`` builds
        for node in walked_of(fn, ast.Attribute):
            if not isinstance(node.ctx, ast.Load) and _is(node.value, receiver):
                value = _value_of(fn, node) if fn.name == "__init__" and receiver else None
                built = Built(value, receiver, made) if value is not None else None  # type: ignore[arg-type]
                yield node.attr, built if built is not None and _class_call(fn, built) else None
        for call in walked_of(fn, ast.Call):
            if scan.dotted_name(call.func) == "setattr" and call.args and _is(call.args[0], receiver):
                yield "*", None


def _value_of(fn: _Function, target: ast.Attribute) -> ast.Call | None:
    """The call stored to ``target`` by a plain ``self.x = Class(...)`` (one target, or one element of a tuple
    assigned a tuple of as many values); None for anything else."""
    for stmt in walked_of(fn, ast.Assign):
        if len(stmt.targets) != 1:
            continue
        pairs = [(stmt.targets[0], stmt.value)]
        if isinstance(stmt.targets[0], ast.Tuple) and isinstance(stmt.value, ast.Tuple):
            pairs = list(zip(stmt.targets[0].elts, stmt.value.elts, strict=False))
        for stored, value in pairs:
            if stored is target and isinstance(value, ast.Call):
                return value
    return None


def _class_call(fn: _Function, built: Built) -> bool:
    """``Class(...)`` or ``nn.Linear(...)`` of a name ``__init__`` does not bind itself (not a factory it is given),
    its arguments handing on no part of the object but its attributes."""
    dotted = scan.dotted_name(built.call.func)
    if dotted is None or dotted.split(".")[0] in _bound(fn):
        return False
    given = arguments(built.call)
    nested = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    whole = any(_is(n, built.receiver) for a in given for n in bare(a))
    return not whole and not any(isinstance(n, nested) for a in given for n in unordered_walk(a))


@per_node
def _bound(fn: _Function) -> frozenset[str]:
    """The names ``fn`` binds itself, its parameters included; read once per function (names only)."""
    return frozenset({*scan.params_of(fn), *(n.id for n in walked_of(fn, ast.Name) if isinstance(n.ctx, ast.Store))})


def _is(node: ast.AST, receiver: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == receiver


def _call_locals(fn: _Function) -> frozenset[str]:
    """The locals ``fn`` binds to what a call returns (``w = nn.Parameter(...)``)."""
    return frozenset(
        {
            t.id
            for stmt in walked_of(fn, ast.Assign)
            if isinstance(stmt.value, ast.Call)
            for t in stmt.targets
            if isinstance(t, ast.Name)
        }
    )


def bare(node: ast.expr) -> Iterator[ast.Name]:
    """The names ``node`` reads other than as the object of an attribute (``self`` in ``f(self)``, not in
    ``self.x``), in no promised order."""
    under = list(unordered_walk(node))
    objects = {id(n.value) for n in under if isinstance(n, ast.Attribute)}
    yield from (n for n in under if isinstance(n, ast.Name) and id(n) not in objects)


def arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def built_call(index: object, key: str, owner: str, attr: str) -> ast.Call | None:
    """The one call of a class that makes ``self.<attr>`` of class ``owner`` of module ``key`` (every store to it
    is that one, in ``__init__``), if so."""
    cls = class_of(index, key, owner)
    found = [built for name, built in stores(cls) if name in (attr, "*")] if cls is not None else []
    if cls is None or len(found) != 1 or found[0] is None:
        return None
    init = next((fn for fn in scan.functions_of(cls) if fn.name == "__init__"), None)
    return through_locals(found[0].call, init) if init is not None else found[0].call
