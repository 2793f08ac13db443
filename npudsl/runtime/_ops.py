"""The ``torch.ops.npudsl`` custom ops: side-effecting, opaque to dynamo, kept by DCE.

Each op returns nothing; ``torch.compile(..., fullgraph=True)`` records it as one
``call_function`` node in program order, and the race checker reads those nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.fx

from npudsl.runtime import _device

__all__ = ["OPS", "op"]

_SCHEMAS: dict[str, tuple[str, Callable[..., None]]] = {
    "stream_enter": ("stream_enter(str tag, int priority) -> ()", _device.stream_enter),
    "stream_exit": ("stream_exit(str tag) -> ()", _device.stream_exit),
    "event_record": ("event_record(str event) -> ()", _device.event_record),
    "event_wait": ("event_wait(str event) -> ()", _device.event_wait),
    "record_stream": ("record_stream(Tensor t, str tag) -> ()", _device.record_stream),
    "core_limit_enter": ("core_limit_enter(int aicore, int vector) -> ()", _device.core_limit_enter),
    "core_limit_exit": ("core_limit_exit() -> ()", _device.core_limit_exit),
}

_LIBRARY = torch.library.Library("npudsl", "DEF")


def _no_effect(*_: Any) -> None:
    """Fake/meta kernel: tracing with fake tensors has no stream effects."""


def _register() -> dict[str, Any]:
    ops = {}
    for name, (schema, kernel) in _SCHEMAS.items():
        _LIBRARY.define(schema)
        _LIBRARY.impl(name, kernel, "CompositeExplicitAutograd")
        _LIBRARY.impl(name, _no_effect, "Meta")
        packet = getattr(torch.ops.npudsl, name)
        torch.fx.node.has_side_effect(packet)
        torch.fx.node.has_side_effect(packet.default)
        ops[name] = packet
    return ops


OPS: dict[str, Any] = _register()


def op(name: str) -> Any:
    """The op packet ``torch.ops.npudsl.<name>``."""
    return OPS[name]
