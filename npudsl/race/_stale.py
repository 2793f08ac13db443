"""Tensors whose graph memory a later replay overwrote, and the error that using one raises.

A tensor expires in place: its class becomes :class:`StaleTensor` (same object, same
storage, no copy), and every torch function that touches it, a method, an operator,
``.item()``, ``print``, indexing, passing it to a compiled model, raises
:class:`~npudsl.errors.StaleOutputError`. Reading its description (shape, dtype,
device, ``len``) is still allowed, as on the device, where only the contents are
overwritten. Fresh outputs stay plain tensors, so the checks cost nothing until a
tensor expires.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import attrs
import torch
from torch._C import DisableTorchFunctionSubclass

from npudsl.errors import StaleOutputError
from npudsl.race._compile_time import compile_time_error
from npudsl.race._source import caller_location

__all__ = ["Origin", "StaleTensor", "expire", "first_stale", "stale_error"]

_DESCRIPTION = frozenset(
    {
        torch.Tensor.size,
        torch.Tensor.dim,
        torch.Tensor.stride,
        torch.Tensor.numel,
        torch.Tensor.is_contiguous,
        torch.Tensor.element_size,
        torch.Tensor.__len__,
        torch.Tensor.__hash__,
        *(
            getattr(torch.Tensor, name).__get__
            for name in (
                "shape",
                "dtype",
                "device",
                "ndim",
                "layout",
                "requires_grad",
                "is_cuda",
            )
        ),
    }
)
_ATTRIBUTE = "_npudsl_expiry"
_INPUT_FIXES = "pass the same tensor to every call, or keep clone_inputs=True (the default)"
_FIXES = (
    "keep a copy instead: clone it where the model makes it (@keep_output(clone=True) on the function that "
    "returns it), compile with npudsl.compile(..., clone_outputs=True), or call .clone() on it before the next call"
)


@attrs.frozen(kw_only=True)
class Origin:
    """What a tracked tensor is, for the error: an output of the model, or an input it captured."""

    what: str  # "output 'logits'", "input 'x'"
    made_at: str  # the model's line that made an output; the user's line that passed an input
    graph: str  # "the compiled model", "graph 2 of the compiled model"
    is_input: bool = False

    def message(self, made_by: int, overwritten_by: int, used_at: str) -> str:
        if self.is_input:
            return (
                f"{self.what} of {self.graph}, passed at {self.made_at} to call {made_by}, which captured the graph "
                f"with clone_inputs=False, is used at {used_at} after call {overwritten_by} copied its own input "
                f"into it (it is the graph's input buffer now): {_INPUT_FIXES}"
            )
        return (
            f"{self.what} of {self.graph}, made at {self.made_at} by call {made_by}, is used at {used_at} after "
            f"call {overwritten_by} overwrote its graph memory (a captured graph runs at fixed addresses; on the "
            f"device this reads call {overwritten_by}'s numbers): {_FIXES}"
        )


def _stale(value: Any) -> Iterator[torch.Tensor]:
    if type(value) is StaleTensor:
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _stale(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _stale(item)


def first_stale(values: Any) -> torch.Tensor | None:
    """The first stale tensor in ``values`` (tensors, tuples, lists and dicts of them), or ``None``."""
    return next(_stale(values), None)


def stale_error(tensor: torch.Tensor | None) -> StaleOutputError:
    """The error for using ``tensor``, made for where it is raised (inside torch.compile or not)."""
    used_at = caller_location()
    expiry = tensor.__dict__.get(_ATTRIBUTE) if tensor is not None else None
    if expiry is None:
        message = f"a stale graph output is used at {used_at}: {_FIXES}"
    else:
        origin, made_by, overwritten_by = expiry
        message = origin.message(made_by, overwritten_by, used_at)
    if torch._guards.TracingContext.try_get() is not None:  # inside torch.compile: dynamo must not wrap it
        return compile_time_error(StaleOutputError, message, sys._getframe(1))
    return StaleOutputError(message)


class StaleTensor(torch.Tensor):
    """A tensor whose memory a later graph replay overwrote; see the module docstring."""

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        if func not in _DESCRIPTION or torch._guards.TracingContext.try_get() is not None:
            raise stale_error(first_stale((args, kwargs)))
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))


def expire(tensor: torch.Tensor, origin: Origin, made_by: int, overwritten_by: int) -> None:
    """Make ``tensor`` stale in place (a no-op for one that already is, or is not a plain tensor)."""
    if type(tensor) is torch.Tensor:
        tensor.__dict__[_ATTRIBUTE] = (origin, made_by, overwritten_by)
        tensor.__class__ = StaleTensor
