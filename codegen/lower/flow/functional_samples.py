"""Runs of one function of ``torch.nn.functional`` on small tensors, and which of its arguments each run writes.

The kinds of the arguments come from the function's annotations (``functional_kinds.py``). The first tensor is
``2 x 3 x 4`` (else ``2 x 3``, ``1 x 2 x 3 x 4``, ``1 x 2 x 2 x 3 x 4``: what 1-, 2- and 3-d ops take); the others
take the first shapes of ``_SHAPES`` with which the function runs (per channel ``(3,)`` for ``batch_norm``'s
running stats, the input's own for ``gaussian_nll_loss``'s ``var``); where float tensors run in no shape, one or two
of them are made int64 indices in ``[0, 2)`` (``F.embedding``'s ``input``, ``F.nll_loss``'s ``target``), and a list
of ints takes each of its candidates in turn. An argument is written where its storage
reaches an op slot whose schema says ``Tensor(a!)`` or where its bytes differ after the run: a kernel that writes
through a plain slot (``native_batch_norm``) is seen by its effect. One the run returns (the storage of a result)
that no op read or wrote is handed back as it came (``functional_recorder.py``). What may be taken away from a run:
a bool (``False``), an optional tensor or float (``None``), a ``float`` with a default (``0.0``).
"""

from __future__ import annotations

import ast
import itertools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from codegen.lower.flow.functional_kinds import Kinds, kinds_of
from codegen.lower.flow.functional_recorder import recorder, storage

__all__ = ["Config", "Outcome", "Sample", "sample_of", "sample_with"]

Config = dict[str, Any]  # parameter -> its tensor's shape, a bool, a number, or None (taken away)
_SHAPES: tuple[tuple[int, ...], ...] = ((2, 3, 4), (3,), (2,), (4,), (2, 3), (), (2, 4), (1, 2, 2, 2))
_FIRSTS: tuple[tuple[int, ...], ...] = ((2, 3, 4), (2, 3), (1, 2, 3, 4), (1, 2, 2, 3, 4))  # a batch, as 1-3d ops take
_TRIES = 64  # shape combinations tried at most per dtypes and choices
_ALL_TRIES = 1024  # runs tried at most per function


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
    integers: frozenset[str] = frozenset()  # the tensors made int64 indices

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
        kwargs = {p: self._made(p, v) if p in self.tensors and v is not None else v for p, v in config.items()}
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
        flat = tree_flatten(result)[0]
        returned = {storage(t) for t in flat if isinstance(t, torch.Tensor) and t.layout == torch.strided}
        passed = {p for p, t in given.items() if storage(t) in returned} - ops.read - ops.written - changed
        return Outcome(frozenset(changed | ops.written), frozenset(passed))

    def _made(self, param: str, shape: tuple[int, ...]) -> Any:
        import torch

        return torch.randint(0, 2, shape) if param in self.integers else torch.rand(shape)


def _same(before: Any, after: Any) -> bool:
    """The same bytes (a NaN kept is no change)."""
    return bool(before.numpy().tobytes() == after.numpy().tobytes())


def sample_of(func: Callable[..., Any], fn: ast.FunctionDef) -> Sample | None:
    """A sample of ``func`` (``fn``: its source) whose base config runs, or None."""
    if fn.args.vararg is not None or fn.args.kwarg is not None:
        return None
    kinds = kinds_of(fn)
    return sample_with(func, kinds) if kinds is not None else None


def sample_with(func: Callable[..., Any], kinds: Kinds) -> Sample | None:
    """A sample of ``func`` with these kinds of parameters whose base config runs, or None: the first tensor ``2 x 3
    x 4`` first, then a batch of 1-, 2- and 3-d inputs; float tensors first, then one and two of them int64; each
    candidate of the lists; the first shapes that run."""
    tensors = kinds.tensors
    integer_sets = itertools.chain.from_iterable(
        itertools.combinations(tensors, n) for n in range(min(3, len(tensors)))
    )
    chosen = [dict(zip(kinds.choices, c, strict=True)) for c in itertools.product(*kinds.choices.values())]
    tries = itertools.product(_FIRSTS, integer_sets, chosen)
    runs = (
        (frozenset(integers), {**kinds.fixed, **choice, **dict(zip(tensors, (first, *shapes), strict=True))})
        for first, integers, choice in tries
        for shapes in itertools.islice(_shapes(len(tensors) - 1), _TRIES)
    )
    for integers, base in itertools.islice(runs, _ALL_TRIES):
        sample = Sample(func, tuple(tensors), kinds.taken, base, integers)
        if tensors and sample.run(base) is not None:
            return sample
    return None


def _shapes(count: int) -> Iterator[tuple[tuple[int, ...], ...]]:
    """Shapes for ``count`` tensors after the first: each of ``_SHAPES`` for all of them, then every combination."""
    yield from ((shape,) * count for shape in _SHAPES)
    yield from itertools.product(_SHAPES, repeat=count)
