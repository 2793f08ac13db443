"""The kinds of a function of ``torch.nn.functional``'s parameters, read from its annotations in torch's source, for
the runs of ``functional_samples.py``.

A parameter typed ``Tensor`` (alone or in a union: ``Tensor | None``, ``Optional[Tensor]``) is a tensor, and so is a
required one without annotation (``def tanh(input)``); whether the function wants floats or indices of it
(``F.embedding``'s ``input``, ``F.nll_loss``'s ``target``) the runs find out (``functional_samples.py`` tries int64
ones where float ones fail). A ``bool`` is given ``True`` and may be taken away (``False``); a ``float`` with a
default keeps it and may be taken to ``0.0``; a ``float | None`` defaulting to None is given ``1.0`` and may be taken
away (``F.embedding``'s ``max_norm``); a required ``int`` is 1, a required ``float`` 0.5. A required list of ints
(``list[int]``, ``BroadcastingList2[int]``, ``tuple[int, ...]``: a shape, a kernel size, a padding) has a few
candidates, each tried (``(4,)`` and ``(3, 4)`` for ``F.layer_norm``'s ``normalized_shape`` of a ``2 x 3 x 4``
input, ``(1, 1)`` for ``F.pad``); ``BroadcastingListN`` holds ``N``. A required ``Callable`` runs the caller's code,
which writes what it writes: no run (an optional one keeps its default). Any other parameter keeps its default; a
required one of another kind: no run.
"""

from __future__ import annotations

import ast
from typing import Any

import attrs

__all__ = ["Kinds", "kinds_of"]

_LISTS = ("list", "List", "tuple", "Tuple", "Sequence", "BroadcastingList")
_VARIABLE: tuple[tuple[int, ...], ...] = ((1, 1), (4,), (3, 4), (2, 2), (1,))  # a list of ints of any length
_GIVEN_FLOAT = 1.0  # an optional float (default None) given


@attrs.frozen
class Kinds:
    """The tensor parameters, what each parameter that may be taken away is then, the given values of the others,
    and the candidates of those with several (lists of ints)."""

    tensors: list[str]
    taken: dict[str, Any]
    fixed: dict[str, Any]
    choices: dict[str, tuple[Any, ...]] = attrs.Factory(dict)


def kinds_of(fn: ast.FunctionDef) -> Kinds | None:
    """The kinds of ``fn``'s parameters (see above); None where a required one can be made of no kind."""
    required, defaults = _required(fn), _defaults(fn)
    kinds = Kinds([], {}, {})
    for param in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
        if not _add(kinds, param, param.arg in required, defaults):
            return None
    return kinds


def _add(kinds: Kinds, param: ast.arg, required: bool, defaults: dict[str, Any]) -> bool:
    """Note ``param``'s kind in ``kinds``; False where it is required and can be made of none."""
    name, members = param.arg, _members(param.annotation)
    if "Callable" in members:
        return not required
    if "Tensor" in members or (param.annotation is None and required):
        kinds.tensors.append(name)
        kinds.taken.update({name: None} if "None" in members or not required else {})
    elif "bool" in members:
        kinds.fixed[name], kinds.taken[name] = True, False
    elif required and _int_list(param.annotation) is not None:
        kinds.choices[name] = _int_list(param.annotation)  # type: ignore[assignment]
    elif required and members & {"int", "float"}:
        kinds.fixed[name] = 1 if "int" in members else 0.5
    elif "float" in members and defaults.get(name):
        kinds.fixed[name], kinds.taken[name] = defaults[name], 0.0  # ``p=0.5`` of ``dropout``: 0 hands the input back
    elif members == {"float", "None"} and name in defaults and defaults[name] is None:
        kinds.fixed[name], kinds.taken[name] = _GIVEN_FLOAT, None
    return not required or name in kinds.tensors or name in kinds.fixed or name in kinds.choices


def _int_list(annotation: ast.expr | None) -> tuple[tuple[int, ...], ...] | None:
    """The candidate values of a list of ints (``BroadcastingList2[int]``: ``(1, 1)``, ``(2, 2)``), if it is one
    (tuples: a config is hashed)."""
    if not (isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name)):
        return None
    head, inner = annotation.value.id, ast.unparse(annotation.slice)
    if not head.startswith(_LISTS) or not inner.startswith("int"):
        return None
    size = head.removeprefix("BroadcastingList")
    return ((1,) * int(size), (2,) * int(size)) if size.isdigit() else _VARIABLE


def _defaults(fn: ast.FunctionDef) -> dict[str, Any]:
    """Each parameter's default where it is a literal."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    pairs = [
        *zip(params[len(params) - len(fn.args.defaults) :], fn.args.defaults),
        *zip((a.arg for a in fn.args.kwonlyargs), fn.args.kw_defaults),
    ]
    return {name: d.value for name, d in pairs if isinstance(d, ast.Constant)}


def _required(fn: ast.FunctionDef) -> set[str]:
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    given = positional[: len(positional) - len(fn.args.defaults)]
    return set(given) | {a.arg for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d is None}


def _members(annotation: ast.expr | None) -> set[str]:
    """The names of a union annotation's members (``Tensor | None``, ``Optional[Tensor]``: ``Tensor``, ``None``)."""
    if annotation is None:
        return set()
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _members(annotation.left) | _members(annotation.right)
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        if annotation.value.id == "Optional":
            return _members(annotation.slice) | {"None"}
        return _members(annotation.slice) if annotation.value.id == "Union" else {annotation.value.id}
    if isinstance(annotation, ast.Tuple):
        return set().union(*(_members(e) for e in annotation.elts))
    if isinstance(annotation, ast.Constant):
        return {"None"} if annotation.value is None else {str(annotation.value)}
    return {annotation.id} if isinstance(annotation, ast.Name) else {ast.unparse(annotation)}
