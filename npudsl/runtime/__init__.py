"""Traceable stream operations for the ``portable`` target.

The code generator emits exactly these calls (``from npudsl import runtime``).
Each lowers to one ``torch.ops.npudsl`` op, so ``torch.compile(fullgraph=True)``
captures them in program order. Eagerly they drive real CUDA/NPU streams and
events; on CPU they are no-ops and everything runs in program order.
Untransformed decorated code runs through :mod:`npudsl.runtime.eager`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from npudsl.runtime._ops import OPS

__all__ = ["clone", "core_limit", "current_stream", "record", "record_stream", "stream", "wait"]

_TAGS: list[str] = []


def current_stream() -> str:
    """The tag of the stream ops run on now ("default": the main stream)."""
    return _TAGS[-1] if _TAGS else "default"


@contextlib.contextmanager
def stream(tag: str, priority: int = 0) -> Iterator[None]:
    """Ops inside run on the stream named ``tag``; nesting is allowed, the inner one wins."""
    OPS["stream_enter"](tag, priority)
    _TAGS.append(tag)
    try:
        yield
    finally:
        _TAGS.pop()
        OPS["stream_exit"](tag)


@contextlib.contextmanager
def core_limit(aicore: int, vector: int) -> Iterator[None]:
    """Ops inside use at most these cores on the current stream; the previous limit comes back on exit."""
    OPS["core_limit_enter"](aicore, vector)
    try:
        yield
    finally:
        OPS["core_limit_exit"]()


def record(event: str) -> None:
    """Record the process-global event ``event`` on the current stream."""
    OPS["event_record"](event)


def wait(event: str) -> None:
    """The current stream waits for the latest record of ``event``."""
    OPS["event_wait"](event)


def record_stream(value: Any, stream: str, objects: bool = True) -> None:
    """Keep the memory of each tensor in ``value`` alive for the work queued on stream ``stream`` ("default":
    main). Tuples, lists and dicts are walked, and a plain object's attributes (one level; not a module's, not a
    class's: a side body may read what the caller's stream made through an object it is given); anything else
    that is not a tensor is left alone."""
    if isinstance(value, torch.Tensor):
        OPS["record_stream"](value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            record_stream(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            record_stream(item, stream, objects)
    elif objects and not isinstance(value, (type, torch.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            record_stream(item, stream, False)


def clone(value: Any) -> Any:
    """``value`` with each tensor in it cloned: tuples, named tuples, lists and dicts are rebuilt."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[clone(item) for item in value])
    if isinstance(value, (tuple, list)):
        return type(value)([clone(item) for item in value])
    if isinstance(value, dict):
        return {key: clone(item) for key, item in value.items()}
    return value
