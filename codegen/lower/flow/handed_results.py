"""What of its object's state a call's result may be: ``self.sub.buf()`` where ``def buf(self): return self.b``.

A method that returns its own state hands its caller that memory: ``self.sub.buf().add_(1)`` and ``t =
self.sub.buf(); t.add_(1)`` write ``self.sub.b`` in place, as ``self.sub.b.add_(1)`` does, and so do
``self.sub.first()[0].zero_()`` (``return self.cache[0]``) and ``self.sub.prop.add_(1)`` (a ``@property`` returning
``self.b``). The write used to reach no state: a side call still reading ``self.sub.b`` raced with it. A method of
the run is read through every ``return`` (:func:`result_paths`): what a returned value may be of its own object (an
attribute, an item or a view of one, a local holding one, what a call it makes hands out, read the same way method
after method), renamed to the caller's path (``sub.b``); a value it makes (``return self.b * 2``) is none. What
``nn.Module``'s own methods hand out (``self.get_buffer("sub.b")``, ``self.sub.state_dict()``) is
``handed_state.py``'s; a method of an object whose class the run cannot read (not ``forward``: a layer's call makes
its result) may hand out any of that object; so may a function given the object, or state of it, that is not one of
the object's methods (``outside_results.py``). Met again (recursion) or past a depth: the whole object. ``"*"``:
the receiver itself, any.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from codegen.frontend.signature import signature_of
from codegen.index.per_index import per_run
from codegen.index.scan import dotted_name
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.aten_forms import function_form
from codegen.lower.flow.changed_objects import object_path
from codegen.lower.flow.handed_state import handed_attribute
from codegen.lower.flow.outside_results import given_results, unread_results
from codegen.lower.flow.param_writes import resolved_function
from codegen.lower.flow.schema import writes_self
from codegen.lower.flow.torch_module_methods import runs_forward
from codegen.lower.flow.view_roots import flows, spread, view_base

if TYPE_CHECKING:
    from codegen.lower.flow.call_state_writes import Scope

__all__ = ["result_paths", "value_paths"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Seen = frozenset[_Function]
_DEPTH = 8  # methods followed one inside another at most; deeper, a result may be any of the object


def value_paths(value: ast.expr, scope: Scope) -> frozenset[str]:
    """The paths of ``scope.receiver``'s state (``sub.b``, ``*``) ``value`` may be through a call at the bottom of
    its chain of views, or a property it reads (read once per run)."""
    key = ("value", value, scope.owner, scope.receiver)
    return _once(key, scope, lambda: _value(value, scope, {}, frozenset(), calls_only=True))


def result_paths(call: ast.Call, scope: Scope, seen: _Seen = frozenset()) -> frozenset[str]:
    """The paths of ``scope.receiver``'s state the result of ``call`` may be (see above); none where it is not a
    method of the object's (or of one of its attributes') and is given none of its state."""
    receiver = scope.receiver
    if receiver is None:
        return frozenset()
    handed = handed_attribute(call, receiver)
    if handed is not None:
        return frozenset({handed})
    parts = (dotted_name(call.func) or "").split(".")
    if len(parts) < 2 or parts[0] != receiver or writes_self(parts[-1]) is not None:
        return given_results(call, scope)  # no method of the object's: a function, or a tensor's (its schema's)
    reached = resolved_function(call, scope.functions, scope.owner, receiver) if scope.owner else None
    if reached is None or reached[2] is None:  # a class the run cannot read: its calls make, its methods may hand out
        return unread_results(call, parts, scope)
    method = reached[0].name == parts[-1] or runs_forward(parts[-1])  # ``self.norm(x)`` runs ``norm``'s forward
    chain = ".".join(parts[1:-1] if method else parts[1:])
    if reached[0] in seen or len(seen) >= _DEPTH:
        return frozenset({chain or "*"})
    return frozenset(_under(chain, path) for path in _returned(reached, scope, seen))


def _returned(reached: tuple[_Function, object, str | None], scope: Scope, seen: _Seen) -> frozenset[str]:
    """The paths of its own object a method's ``return`` statements may give (``*``: any), read once per run."""
    return _once(("returned", reached[0], reached[2], seen), scope, lambda: _returns(reached, seen))


def _returns(reached: tuple[_Function, object, str | None], seen: _Seen) -> frozenset[str]:
    fn, functions, owner = reached
    receiver = signature_of(fn, method=True).receiver
    if receiver is None:
        return frozenset()
    from codegen.lower.flow.call_state_writes import Scope

    inner, inside = Scope(functions, owner, receiver), seen | {fn}  # type: ignore[arg-type]
    seed: dict[str, frozenset[str]] = {}
    for names, value in flows(fn):
        paths = _value(value, inner, {}, inside, calls_only=True)
        seed.update((name, seed.get(name, frozenset()) | paths) for name in names if paths)
    held = spread(fn, seed, lambda part, found: _part(part, inner, found, inside))
    values = [r.value for r in walked_of(fn, ast.Return) if r.value is not None]
    return frozenset().union(*(_value(v, inner, held, inside, calls_only=False) for v in values))


def _value(
    value: ast.expr, scope: Scope, held: dict[str, frozenset[str]], seen: _Seen, *, calls_only: bool
) -> frozenset[str]:
    """What ``value`` may be of the object's state: each choice of it (``a if c else b``, ``(a, b)``), down its
    chain of views; with ``calls_only``, only what a call or a property hands out (the rest: ``state_views.py``)."""
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return frozenset().union(*(_value(e, scope, held, seen, calls_only=calls_only) for e in value.elts))
    if isinstance(value, ast.IfExp):
        parts = [value.body, value.orelse]
        return frozenset().union(*(_value(p, scope, held, seen, calls_only=calls_only) for p in parts))
    if isinstance(value, ast.BoolOp):
        return frozenset().union(*(_value(v, scope, held, seen, calls_only=calls_only) for v in value.values))
    if isinstance(value, (ast.NamedExpr, ast.Starred)):
        return _value(value.value, scope, held, seen, calls_only=calls_only)
    found = _bottom(value, scope, seen)
    return found if calls_only else found | _part(value, scope, held, seen)


def _bottom(node: ast.expr, scope: Scope, seen: _Seen) -> frozenset[str]:
    """What a call at the bottom of ``node``'s chain of views hands out, or a property read on the way."""
    while True:
        if isinstance(node, ast.Attribute) and (prop := _property(node, scope, seen)) is not None:
            return prop
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and writes_self(node.func.attr):
            form = function_form(node)  # ``t.add_(1)`` and ``torch.relu_(t)`` return ``t``
            below = node.func.value if form is None else form[1]
        else:
            below = view_base(node)
        if below is None:
            return result_paths(node, scope, seen) if isinstance(node, ast.Call) else frozenset()
        node = below


def _part(part: ast.expr, scope: Scope, held: dict[str, frozenset[str]], seen: _Seen) -> frozenset[str]:
    """The paths a chain of views rooted at the receiver, or at a local holding its state, may be."""
    path = object_path(part)
    if path is None:
        return frozenset()
    root, _, rest = path.partition(".")
    if root == scope.receiver:
        return frozenset({rest.split(".*")[0] or "*"})
    return frozenset(_under(h, rest) if h != "*" else "*" for h in held.get(root, ()))


def _property(node: ast.Attribute, scope: Scope, seen: _Seen) -> frozenset[str] | None:
    """``self.sub.prop``: what a ``@property`` of the run that ``prop`` names returns (None: no such property)."""
    chain = _object_of(node, scope.receiver or "")
    if chain is None or scope.owner is None:
        return None
    reached = resolved_function(_as_call(node), scope.functions, scope.owner, scope.receiver)
    if reached is None or reached[2] is None or not _is_property(reached[0]):
        return None
    if reached[0] in seen or len(seen) >= _DEPTH:
        return frozenset({chain or "*"})
    return frozenset(_under(chain, path) for path in _returned(reached, scope, seen))


@per_node
def _as_call(node: ast.Attribute) -> ast.Call:
    """``self.sub.prop`` as the call ``self.sub.prop()`` that resolves the method it names (kept: resolutions are
    kept per call)."""
    return ast.Call(func=node, args=[], keywords=[])


def _is_property(fn: _Function) -> bool:
    return any(dotted_name(d) in ("property", "functools.cached_property") for d in fn.decorator_list)


def _object_of(func: ast.expr, receiver: str) -> str | None:
    """The path under ``receiver`` of the object ``func`` is a method of (``""``: the receiver's own, ``sub``)."""
    chain = dotted_name(func.value) if isinstance(func, ast.Attribute) else None
    if chain is None or (chain != receiver and not chain.startswith(f"{receiver}.")):
        return None
    return chain[len(receiver) + 1 :]


def _once(key: tuple[object, ...], scope: Scope, read: Callable[[], frozenset[str]]) -> frozenset[str]:
    """``read()``, kept for the run ``scope``'s module is in (read each time where none is at hand)."""
    index = getattr(scope.functions, "index", None)
    if index is None:
        return read()
    kept = _kept(index)
    found = kept.get(key)
    if found is None:
        found = kept[key] = read()
    return found


@per_run
def _kept(index: object) -> dict[tuple[object, ...], frozenset[str]]:
    return {}


def _under(chain: str, path: str) -> str:
    """``path`` of the object at ``chain`` (``""``: the receiver), as a path of the receiver."""
    if path == "*":
        return chain or "*"
    return f"{chain}.{path}" if chain else path
