"""A stand-in ``torchair`` module: the 2.13.0 API generated code calls, over the ops of :mod:`._ops`.

Each call does what torchair's Python layer does (``torch_npu/dynamo/torchair``):
``scope.npu_stream_switch`` / ``limit_core_num`` / ``super_kernel`` are scope
markers (``scope_enter(keys, values)`` ... ``scope_exit()``, with the same keys);
``scope.npu_wait_tensor`` calls ``wait_tensor``; the tagged-event functions map an
event to its tag and call ``tagged_event_record`` / ``tagged_event_wait``;
``npu_record_tagged_stream`` calls the in-place ``record_tagged_stream_``;
``ops.record()`` returns the token tensor of ``record`` and ``ops.wait(tensors)``
checks its argument and calls ``wait``. Tags are global to one installation, as
they are to a process: creating a tag twice raises ``ValueError``.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import torch

from npudsl.testing.standins import _ops
from npudsl.testing.standins._config import CompilerConfig

__all__ = ["TaggedEvent", "build"]

_AIR = torch.ops.standin_air


class _Scope:
    def __init__(self, attrs: list[tuple[str, str]]) -> None:
        self.attrs = attrs

    def __enter__(self) -> None:
        keys, values = zip(*self.attrs)
        return _AIR.scope_enter(list(keys), list(values))

    def __exit__(self, *_: Any) -> None:
        return _AIR.scope_exit()


def npu_stream_switch(stream_tag: str, stream_priority: int = 0, enable_inner_parallel: bool = True) -> _Scope:
    return _Scope(
        [
            ("_user_stream_label", stream_tag),
            ("_user_stream_priority", str(stream_priority)),
            ("_enable_inner_parallel", str(enable_inner_parallel)),
        ]
    )


def limit_core_num(op_aicore_num: int, op_vectorcore_num: int) -> _Scope:
    return _Scope([("_op_aicore_num", str(op_aicore_num)), ("_op_vectorcore_num", str(op_vectorcore_num))])


def super_kernel(scope: str, options: str = "") -> _Scope:
    return _Scope([("_super_kernel_scope", scope or ""), ("_super_kernel_options", options)])


def npu_wait_tensor(self: torch.Tensor, dependency: torch.Tensor) -> torch.Tensor:
    return _AIR.wait_tensor(self, dependency)


class TaggedEvent:
    """What ``npu_create_tagged_event`` returns (the real one returns a ``torch.npu.Event``)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def __repr__(self) -> str:
        return f"TaggedEvent({self.tag!r})"


def npu_create_tagged_event(tag: str) -> TaggedEvent:
    if tag in _ops.created_tags:
        raise ValueError(f"tagged event tag {tag} is already in use")
    _ops.created_tags.add(tag)
    return TaggedEvent(tag)


def _tag_of(event: TaggedEvent) -> str:
    if not isinstance(event, TaggedEvent) or event.tag not in _ops.created_tags:
        raise ValueError(f"tagged event {event} is not in use")
    return event.tag


def npu_tagged_event_record(event: TaggedEvent) -> None:
    return _AIR.tagged_event_record(_tag_of(event))


def npu_tagged_event_wait(event: TaggedEvent) -> None:
    return _AIR.tagged_event_wait(_tag_of(event))


def npu_record_tagged_stream(input: torch.Tensor, tagged_stream: str) -> None:  # noqa: A002 (the real name)
    return _AIR.record_tagged_stream_(input, tagged_stream)


def record() -> torch.Tensor:
    return _AIR.record()


def wait(tensors: list[torch.Tensor]) -> None:
    if tensors is None or len(tensors) == 0:
        raise ValueError("torchair.ops.wait() requires at least one tensor input")
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor):
            raise ValueError("arguments of torchair.ops.wait() must be torch.Tensor")
    return _AIR.wait(tensors)


def _namespace(name: str, functions: dict[str, Any]) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(functions)
    return module


def build(backend_for: Callable[[CompilerConfig], Callable[..., Any]]) -> dict[str, types.ModuleType]:
    """``sys.modules`` entries for ``torchair``, ``torchair.scope`` and ``torchair.ops``.

    ``get_npu_backend(compiler_config=...)`` returns ``backend_for(config)``.
    """
    scope = _namespace(
        "torchair.scope", {f.__name__: f for f in (npu_stream_switch, limit_core_num, super_kernel, npu_wait_tensor)}
    )
    ops = _namespace(
        "torchair.ops",
        {
            f.__name__: f
            for f in (
                npu_create_tagged_event,
                npu_tagged_event_record,
                npu_tagged_event_wait,
                npu_record_tagged_stream,
                record,
                wait,
            )
        },
    )

    def get_npu_backend(
        *, compiler_config: CompilerConfig | None = None, custom_decompositions: dict | None = None
    ) -> Callable[..., Any]:
        return backend_for(compiler_config if compiler_config is not None else CompilerConfig())

    torchair = _namespace(
        "torchair", {"scope": scope, "ops": ops, "CompilerConfig": CompilerConfig, "get_npu_backend": get_npu_backend}
    )
    return {"torchair": torchair, "torchair.scope": scope, "torchair.ops": ops}
