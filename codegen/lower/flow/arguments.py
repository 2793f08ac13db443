"""The arguments of a planned call: which parameter each binds, which names it hands over whole, and which
must be bound to a name first so the caller can keep them alive for the callee's stream.

Only arguments that may be tensors are kept alive: a parameter annotated as a scalar or as another class
is not, unless the caller changes the object it gives (``changed_objects.py``). Constants are never
tensors; ``self.<attr>`` chains are the module's own state, which lives on. A ``*args``/``**kwargs`` name
is walked at run time. Any other expression is bound to a fresh name just
before the call (in argument order, so evaluation order is kept).
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.signature import ParamKind, Signature, Tensorness
from codegen.lower.flow.changed_objects import object_path
from codegen.lower.flow.paths_meet import meets

__all__ = ["Argument", "arguments"]


@attrs.frozen(kw_only=True)
class Argument:
    slot: int | str  # the position in ``call.args``, or the keyword (``**`` for ``**kwargs``)
    node: ast.expr
    tensor: Tensorness
    name: str | None  # the name that holds it at the call (None: an expression to bind first, or nothing)
    bare: bool  # the whole value is a name the caller holds (a ``*name`` too)


def _param_for(signature: Signature, position: int | None, keyword: str | None) -> Tensorness:
    params = signature.params
    if keyword is not None:
        found = signature.get(keyword)
        if found is not None and found.kind not in (ParamKind.POSITIONAL_ONLY, ParamKind.VAR_POSITIONAL):
            return found.tensor
        rest = next((p for p in params if p.kind is ParamKind.VAR_KEYWORD), None)
        return rest.tensor if rest is not None else Tensorness.MAYBE
    positional = [p for p in params if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL)]
    if position is not None and position < len(positional):
        return positional[position].tensor
    rest = next((p for p in params if p.kind is ParamKind.VAR_POSITIONAL), None)
    return rest.tensor if rest is not None else Tensorness.MAYBE


def _long_lived(node: ast.expr, receiver: str | None) -> bool:
    """A constant, or the caller's own module state (``self.weight``, ``self.cache.k``)."""
    if isinstance(node, ast.Constant):
        return True
    while isinstance(node, ast.Attribute):
        node = node.value
    return receiver is not None and isinstance(node, ast.Name) and node.id == receiver


def arguments(
    call: ast.Call,
    signature: Signature,
    *,
    explicit_receiver: bool,
    receiver: str | None,
    changed: frozenset[str] = frozenset(),
) -> list[Argument]:
    """Every argument of ``call`` that may carry a tensor into the callee, in evaluation order. ``changed``: the
    caller's objects whose state it changes (``changed_objects.py``): kept even where the parameter is annotated
    as another class."""
    found: list[Argument] = []
    args = list(enumerate(call.args))[1:] if explicit_receiver else list(enumerate(call.args))
    starred = False
    for position, (slot, node) in enumerate(args):
        starred = starred or isinstance(node, ast.Starred)
        tensor = Tensorness.MAYBE if starred else _param_for(signature, position, None)
        found.append(_argument(slot, node.value if isinstance(node, ast.Starred) else node, tensor, receiver))
    for keyword in call.keywords:
        tensor = _param_for(signature, None, keyword.arg) if keyword.arg else Tensorness.MAYBE
        found.append(_argument(keyword.arg or "**", keyword.value, tensor, receiver))
    found = [attrs.evolve(a, tensor=Tensorness.MAYBE) if _changed(a, changed) else a for a in found]
    return [a for a in found if a.tensor is not Tensorness.NO and not _long_lived(a.node, receiver)]


def _changed(argument: Argument, changed: frozenset[str]) -> bool:
    """A parameter annotated as another class given an object (an item, a part of one) the caller changes."""
    path = object_path(argument.node)
    return argument.tensor is Tensorness.NO and path is not None and any(meets(path, c) for c in changed)


def _argument(slot: int | str, node: ast.expr, tensor: Tensorness, receiver: str | None) -> Argument:
    name = node.id if isinstance(node, ast.Name) else None
    return Argument(slot=slot, node=node, tensor=tensor, name=name, bare=name is not None)
