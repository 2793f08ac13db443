"""Runs of one function of ``torch.nn.functional`` on small tensors, and which of its arguments each run writes.

The arguments are made from the function's annotations in torch's source: a parameter typed ``Tensor`` (alone or in
a union: ``Tensor | None``, ``Optional[Tensor]``) gets a float tensor of values in [0, 1) (a variance, a
probability), a ``bool`` ``True``, a ``float`` its default, a required ``int`` 1, a required ``float`` 0.5, a
required one without annotation (``def tanh(input)``) a tensor; any other parameter keeps its default (a required
one: no run). A function taking a ``Callable`` is not run: it runs the caller's code. The first tensor is ``2 x 3 x
4``; the others take the first shapes of ``_SHAPES`` with which the function runs (per channel ``(3,)`` for
``batch_norm``'s running stats, the input's own for ``gaussian_nll_loss``'s ``var``). An argument is written where
its storage reaches an op slot whose schema says ``Tensor(a!)`` or where its bytes differ after the run: a kernel
that writes through a plain slot (``native_batch_norm``) is seen by its effect. One the run returns (the storage of
a result) that no op read or wrote is handed back as it came (``functional_recorder.py``). What may be taken away
from a run: a bool (``False``), an optional tensor (``None``), a ``float`` with a default (``0.0``).
"""

from __future__ import annotations

import ast
import itertools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from codegen.lower.flow.functional_recorder import recorder, storage

__all__ = ["Config", "Outcome", "Sample", "sample_of", "sample_with"]

Config = dict[str, Any]  # parameter -> its tensor's shape, a bool, a number, or None (taken away)
_SHAPES: tuple[tuple[int, ...], ...] = ((2, 3, 4), (3,), (2,), (4,), (2, 3), ())
_FIRST = (2, 3, 4)
_TRIES = 64  # shape combinations tried at most


@attrs.frozen
class Outcome:
    """What one run did to its arguments: those it wrote, and those it returned as they came, unread."""

    written: frozenset[str]
    passed: frozenset[str]


@attrs.frozen
class Sample:
    """A function, the kinds of its parameters, and the config its runs start from."""

    func: Callable[..., Any]
    tensors: tuple[str, ...]
    taken: dict[str, Any]  # a parameter that may be taken away -> its value then (False, None, 0.0)
    base: Config

    def takeable(self, config: Config, *, numbers: bool = False) -> list[str]:
        """The parameters given in ``config`` that may be taken away (a bool True, an optional tensor; with
        ``numbers``, a number not 0: a kernel writing the same values again changes no byte, so a write's guards
        leave numbers out)."""
        found = [p for p, v in config.items() if p in self.taken and v != self.taken[p]]
        return found if numbers else [p for p in found if type(self.taken[p]) is not float]

    def without(self, config: Config, param: str) -> Config:
        return {**config, param: self.taken[param]}

    def run(self, config: Config) -> Outcome | None:
        """What a run with ``config`` writes and hands back unread (None: the run failed)."""
        import torch
        from torch.utils._pytree import tree_flatten

        torch.manual_seed(0)
        kwargs = {p: torch.rand(v) if p in self.tensors and v is not None else v for p, v in config.items()}
        given = {p: t for p, t in kwargs.items() if isinstance(t, torch.Tensor)}
        before = {p: t.clone() for p, t in given.items()}
        ops = recorder({storage(t): p for p, t in given.items()})
        try:
            with ops, warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecations of the functions run
                result = self.func(**kwargs)
        except Exception:  # noqa: BLE001 - a config the function rejects: no run
            return None
        changed = {p for p, t in given.items() if not _same(before[p], t)}
        returned = {storage(t) for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor)}
        passed = {p for p, t in given.items() if storage(t) in returned} - ops.read - ops.written - changed
        return Outcome(frozenset(changed | ops.written), frozenset(passed))


def _same(before: Any, after: Any) -> bool:
    """The same bytes (a NaN kept is no change)."""
    return bool(before.numpy().tobytes() == after.numpy().tobytes())


def sample_of(func: Callable[..., Any], fn: ast.FunctionDef) -> Sample | None:
    """A sample of ``func`` (``fn``: its source) whose base config runs, or None."""
    if fn.args.vararg is not None or fn.args.kwarg is not None:
        return None
    kinds = _kinds(fn)
    return sample_with(func, *kinds) if kinds is not None else None


def sample_with(func: Callable[..., Any], tensors: list[str], taken: dict[str, Any], fixed: Config) -> Sample | None:
    """A sample of ``func`` with these kinds of parameters whose base config runs (the first shapes that do), or
    None."""
    for shapes in itertools.islice(_shapes(len(tensors) - 1), _TRIES):
        base = {**fixed, **dict(zip(tensors, (_FIRST, *shapes), strict=True))}
        sample = Sample(func, tuple(tensors), taken, base)
        if tensors and sample.run(base) is not None:
            return sample
    return None


def _shapes(count: int) -> Iterator[tuple[tuple[int, ...], ...]]:
    """Shapes for ``count`` tensors after the first: each of ``_SHAPES`` for all of them, then every combination."""
    yield from ((shape,) * count for shape in _SHAPES)
    yield from itertools.product(_SHAPES, repeat=count)


def _kinds(fn: ast.FunctionDef) -> tuple[list[str], dict[str, Any], Config] | None:
    """The tensor parameters, the value of each that may be taken away, and the given values of the others (None: a
    required parameter no value can be made for)."""
    required, defaults = _required(fn), _defaults(fn)
    tensors: list[str] = []
    taken: dict[str, Any] = {}
    fixed: Config = {}
    for param in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
        name, members = param.arg, _members(param.annotation)
        if "Callable" in members:
            return None  # it runs the caller's code, which writes what it writes
        if "Tensor" in members or (param.annotation is None and name in required):
            tensors.append(name)
            taken |= {name: None} if "None" in members or name not in required else {}
        elif "bool" in members:
            fixed[name], taken[name] = True, False
        elif name in required and members & {"int", "float"}:
            fixed[name] = 1 if "int" in members else 0.5
        elif "float" in members and defaults.get(name):
            fixed[name], taken[name] = defaults[name], 0.0  # ``p=0.5`` of ``dropout``: 0 hands the input back
        elif name in required:
            return None
    return tensors, taken, fixed


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
