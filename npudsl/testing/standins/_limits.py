"""Core limits on the stand-in streams: the eager ``torch.npu`` calls and npugraph_ex's traced scope.

``get_stream_limit``/``set_stream_limit``/``reset_stream_limit`` follow
``torch_npu/npu/npu_config.py`` (an ``AssertionError`` for a missing or foreign
stream; ``-1`` leaves a count unchanged) and are ``torch._dynamo.disable``-d,
since the real ones end in C bindings dynamo does not trace: inside a
``fullgraph=True`` region they fail as the real ones do.

``npugraph_ex.scope.limit_core_num(aicore, vector, stream=None)`` follows
``torch_npu/dynamo/npugraph_ex/scope/__init__.py``: eagerly it sets the limit
of the stream (the current one by default) and restores it on exit; while
compiling it is a scope marker, ``standin_npugraph_ex.scope_enter(["_op_aicore_num",
"_op_vectorcore_num"], [...])`` ... ``scope_exit()`` (the stream argument is not
carried into the graph here; the race checker does not order by core limits).
"""

from __future__ import annotations

import types
from typing import Any

import torch

from npudsl.testing.standins._device import _ACTIVE, DEFAULT_LIMIT, Stream

__all__ = ["get_stream_limit", "npugraph_ex_module", "reset_stream_limit", "set_stream_limit"]

_UNTRACEABLE = "the real torch.npu stream limits are C bindings that dynamo does not trace"


def _check(stream: Any) -> Stream:
    if stream is None:
        raise AssertionError("stream cannot be None")
    if not isinstance(stream, Stream):
        raise AssertionError(f"stream should be torch_npu.npu.Stream, could not be {type(stream)}")
    return stream


@torch._dynamo.disable(reason=_UNTRACEABLE)
def get_stream_limit(stream: Any) -> dict[str, int]:
    stream = _check(stream)
    return dict(stream.standin.limits.get(stream.name, DEFAULT_LIMIT))


@torch._dynamo.disable(reason=_UNTRACEABLE)
def set_stream_limit(stream: Any, cube_num: int = -1, vector_num: int = -1) -> None:
    stream = _check(stream)
    limit = dict(stream.standin.limits.get(stream.name, DEFAULT_LIMIT))
    if cube_num != -1:
        limit["cube_core_num"] = cube_num
    if vector_num != -1:
        limit["vector_core_num"] = vector_num
    stream.standin.limits[stream.name] = limit


@torch._dynamo.disable(reason=_UNTRACEABLE)
def reset_stream_limit(stream: Any) -> None:
    stream = _check(stream)
    stream.standin.limits.pop(stream.name, None)


class _EagerLimit:
    def __init__(self, cube: int, vector: int, stream: Stream | None) -> None:
        self.cube, self.vector, self.stream = cube, vector, stream
        self.previous: dict[str, int] = {}

    def __enter__(self) -> _EagerLimit:
        self.stream = self.stream if self.stream is not None else _ACTIVE[-1].current_stream()
        self.previous = get_stream_limit(self.stream)
        set_stream_limit(self.stream, self.cube, self.vector)
        return self

    def __exit__(self, *_: Any) -> None:
        set_stream_limit(self.stream, self.previous["cube_core_num"], self.previous["vector_core_num"])


class _Marker:
    def __init__(self, cube: int, vector: int) -> None:
        self.values = [str(cube), str(vector)]

    def __enter__(self) -> None:
        return torch.ops.standin_npugraph_ex.scope_enter(["_op_aicore_num", "_op_vectorcore_num"], self.values)

    def __exit__(self, *_: Any) -> None:
        return torch.ops.standin_npugraph_ex.scope_exit()


def limit_core_num(op_aicore_num: int, op_vectorcore_num: int, stream: Stream | None = None) -> Any:
    if not torch.compiler.is_compiling():
        return _EagerLimit(op_aicore_num, op_vectorcore_num, stream)
    return _Marker(op_aicore_num, op_vectorcore_num)


def npugraph_ex_module() -> types.ModuleType:
    """``torch.npu.npugraph_ex`` with its ``scope.limit_core_num``."""
    scope = types.ModuleType("torch.npu.npugraph_ex.scope")
    scope.limit_core_num = limit_core_num  # type: ignore[attr-defined]
    module = types.ModuleType("torch.npu.npugraph_ex")
    module.scope = scope  # type: ignore[attr-defined]
    return module
