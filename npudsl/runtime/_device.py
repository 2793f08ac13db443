"""Eager effects of the runtime ops: real streams and events where the machine has them.

On CPU every function here is a no-op, so ops run in program order. With CUDA
(or ``torch.npu`` when torch_npu is loaded) a stream tag names one stream per
process and an event tag one event per process, both created on first use.
Nothing touches a device until an op runs.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import torch

__all__ = [
    "core_limit_enter",
    "core_limit_exit",
    "event_record",
    "event_wait",
    "record_stream",
    "stream_enter",
    "stream_exit",
]

_STREAMS: dict[str, Any] = {}
_EVENTS: dict[str, Any] = {}
_LOCAL = threading.local()


@functools.cache
def _accelerator() -> Any:
    """``torch.npu`` or ``torch.cuda`` when usable, else ``None`` (CPU: program order)."""
    npu = getattr(torch, "npu", None)
    if npu is not None and npu.is_available():
        return npu
    return torch.cuda if torch.cuda.is_available() else None


def _stack(name: str) -> list[Any]:
    if not hasattr(_LOCAL, name):
        setattr(_LOCAL, name, [])
    return getattr(_LOCAL, name)


def _main_stream(acc: Any) -> Any:
    """The stream that was current before the outermost ``stream_enter``."""
    entered = _stack("streams")
    return entered[0] if entered else acc.current_stream()


def _stream_for(acc: Any, tag: str) -> Any:
    if tag == "default":
        return _main_stream(acc)
    if tag not in _STREAMS:
        _STREAMS[tag] = acc.Stream()
    return _STREAMS[tag]


def stream_enter(tag: str, priority: int) -> None:
    """Make the stream of ``tag`` current. ``priority`` is reserved (as in torchair)."""
    acc = _accelerator()
    if acc is None:
        return
    target = _stream_for(acc, tag)
    _stack("streams").append(acc.current_stream())
    acc.set_stream(target)


def stream_exit(tag: str) -> None:
    acc = _accelerator()
    if acc is not None:
        acc.set_stream(_stack("streams").pop())


def event_record(event: str) -> None:
    acc = _accelerator()
    if acc is None:
        return
    if event not in _EVENTS:
        _EVENTS[event] = acc.Event()
    _EVENTS[event].record(acc.current_stream())


def event_wait(event: str) -> None:
    """Wait for the event's latest record; an event never recorded has nothing to wait for."""
    acc = _accelerator()
    if acc is not None and event in _EVENTS:
        acc.current_stream().wait_event(_EVENTS[event])


def record_stream(tensor: torch.Tensor, tag: str) -> None:
    acc = _accelerator()
    if acc is not None and tensor.device.type in ("cuda", "npu"):
        tensor.record_stream(_stream_for(acc, tag))


def core_limit_enter(aicore: int, vector: int) -> None:
    """On NPU, limit the current stream's cores; CUDA and CPU have no counterpart."""
    acc = _accelerator()
    if acc is None or acc is torch.cuda:
        return
    stream = acc.current_stream()
    limits = _stack("limits")
    previous = next((lim for s, lim in reversed(limits) if s == stream), None)
    limits.append((stream, (aicore, vector), previous))
    acc.set_stream_limit(stream, aicore, vector)


def core_limit_exit() -> None:
    acc = _accelerator()
    if acc is None or acc is torch.cuda:
        return
    stream, _, previous = _stack("limits").pop()
    if previous is None:
        acc.reset_stream_limit(stream)
    else:
        acc.set_stream_limit(stream, *previous)
