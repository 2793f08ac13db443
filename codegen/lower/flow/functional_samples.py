"""Runs of one function of ``torch.nn.functional`` on small tensors, and which of its arguments each run writes.

The arguments are made from the function's annotations in torch's source: a parameter typed ``Tensor`` (alone or in
a union: ``Tensor | None``, ``Optional[Tensor]``) gets a float tensor of values in [0, 1) (a variance, a
probability), a ``bool`` ``True``, a required ``int`` 1, a required ``float`` 0.5, a required one without annotation
(``def tanh(input)``) a tensor; any other parameter keeps its default (a required one: no run). A function taking a
``Callable`` is not run: it runs the caller's code. The first tensor is ``2 x 3 x 4``; the others take the first
shapes of ``_SHAPES`` with which the function runs (per channel ``(3,)`` for ``batch_norm``'s running stats, the
input's own for ``gaussian_nll_loss``'s ``var``). An argument is written where its storage reaches an op slot whose
schema says ``Tensor(a!)`` (a dispatch mode reads each op's schema) or where its bytes differ after the run: a kernel
that writes through a plain slot (``native_batch_norm``) is seen by its effect.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import attrs

__all__ = ["Config", "Sample", "sample_of"]

Config = dict[str, Any]  # parameter -> its tensor's shape, a bool, a number, or None (taken away)
_SHAPES: tuple[tuple[int, ...], ...] = ((2, 3, 4), (3,), (2,), (4,), (2, 3), ())
_FIRST = (2, 3, 4)
_TRIES = 64  # shape combinations tried at most


@attrs.frozen
class Sample:
    """A function, the kinds of its parameters, and the config its runs start from."""

    func: Callable[..., Any]
    tensors: tuple[str, ...]
    optional: frozenset[str]  # tensors that may be None
    bools: frozenset[str]
    base: Config

    def takeable(self, config: Config) -> list[str]:
        """The parameters given in ``config`` that may be taken away (a bool True, an optional tensor)."""
        return [p for p, v in config.items() if (p in self.bools and v is True) or (p in self.optional and v)]

    def without(self, config: Config, param: str) -> Config:
        return {**config, param: False if param in self.bools else None}

    def run(self, config: Config) -> frozenset[str] | None:
        """The parameters a run with ``config`` writes (None: the run failed)."""
        import torch

        torch.manual_seed(0)
        kwargs = {p: torch.rand(v) if p in self.tensors and v is not None else v for p, v in config.items()}
        given = {p: t for p, t in kwargs.items() if isinstance(t, torch.Tensor)}
        before = {p: t.clone() for p, t in given.items()}
        recorder = _recorder({t.untyped_storage()._cdata: p for p, t in given.items()})
        try:
            with recorder:
                self.func(**kwargs)
        except Exception:  # noqa: BLE001 - a config the function rejects: no run
            return None
        changed = {p for p, t in given.items() if not _same(before[p], t)}
        return frozenset(changed | recorder.written)


def _same(before: Any, after: Any) -> bool:
    """The same bytes (a NaN kept is no change)."""
    return bool(before.numpy().tobytes() == after.numpy().tobytes())


def _recorder(storages: dict[int, str]) -> Any:
    """A dispatch mode noting which of ``storages`` reach a slot marked ``Tensor(a!)``, in ``written``."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Recorder(TorchDispatchMode):
        written: set[str] = set()

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            named = dict(zip((a.name for a in func._schema.arguments), args)) | kwargs
            for argument in func._schema.arguments:
                if argument.alias_info is not None and argument.alias_info.is_write:
                    values = tree_flatten(named.get(argument.name))[0]
                    self.written |= {storages[v.untyped_storage()._cdata] for v in values if _held(v, storages)}
            return func(*args, **kwargs)

    recorder = Recorder()
    recorder.written = set()
    return recorder


def _held(value: Any, storages: dict[int, str]) -> bool:
    import torch

    return isinstance(value, torch.Tensor) and value.untyped_storage()._cdata in storages


def sample_of(func: Callable[..., Any], fn: ast.FunctionDef) -> Sample | None:
    """A sample of ``func`` (``fn``: its source) whose base config runs, or None."""
    if fn.args.vararg is not None or fn.args.kwarg is not None:
        return None
    kinds = _kinds(fn)
    if kinds is None:
        return None
    tensors, optional, bools, fixed = kinds
    for shapes in itertools.islice(_shapes(len(tensors) - 1), _TRIES):
        base = {**fixed, **{b: True for b in bools}, **dict(zip(tensors, (_FIRST, *shapes), strict=True))}
        sample = Sample(func, tuple(tensors), frozenset(optional), frozenset(bools), base)
        if tensors and sample.run(base) is not None:
            return sample
    return None


def _shapes(count: int) -> Iterator[tuple[tuple[int, ...], ...]]:
    """Shapes for ``count`` tensors after the first: each of ``_SHAPES`` for all of them, then every combination."""
    yield from ((shape,) * count for shape in _SHAPES)
    yield from itertools.product(_SHAPES, repeat=count)


def _kinds(fn: ast.FunctionDef) -> tuple[list[str], list[str], list[str], Config] | None:
    """The tensor parameters, those that may be None, the bools, and the required numbers' values (None: a required
    parameter no value can be made for)."""
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    required = _required(fn)
    tensors, optional, bools, fixed = [], [], [], {}
    for param in params:
        members = _members(param.annotation)
        if "Callable" in members:
            return None  # it runs the caller's code, which writes what it writes
        if "Tensor" in members or (param.annotation is None and param.arg in required):
            tensors.append(param.arg)
            optional += [param.arg] if "None" in members or param.arg not in required else []
        elif "bool" in members:
            bools.append(param.arg)
        elif param.arg in required and members & {"int", "float"}:
            fixed[param.arg] = 1 if "int" in members else 0.5
        elif param.arg in required:
            return None
    return tensors, optional, bools, fixed


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
