"""A stand-in for ``torch.cuda`` / ``torch.npu`` that counts what the generated code creates and calls."""

from __future__ import annotations

import contextlib
import types
from collections import Counter
from collections.abc import Iterator

import attrs

__all__ = ["FakeDevice"]


@attrs.define(eq=False)
class _Stream:
    device: FakeDevice
    priority: int = 0

    def wait_event(self, event: _Event) -> None:
        self.device.calls["wait_event"] += 1


@attrs.define(eq=False)
class _Event:
    device: FakeDevice

    def record(self, stream: _Stream | None = None) -> None:
        self.device.calls["record"] += 1


@attrs.define(eq=False, slots=False)  # a module-like object: generated code keeps its stream table in vars()
class FakeDevice:
    """Streams run in program order here, so results must equal the single-stream ones."""

    calls: Counter[str] = attrs.Factory(Counter)
    main: _Stream | None = None
    current: list[_Stream] = attrs.Factory(list)
    limit: dict[str, int] = attrs.Factory(lambda: {"cube_core_num": 24, "vector_core_num": 48})

    def Stream(self, priority: int = 0) -> _Stream:  # noqa: N802 (the torch name)
        self.calls["Stream"] += 1
        return _Stream(self, priority)

    def Event(self) -> _Event:  # noqa: N802
        self.calls["Event"] += 1
        return _Event(self)

    @property
    def npugraph_ex(self) -> object:
        """``torch.npu.npugraph_ex``: its ``scope.limit_core_num`` sets the current stream's limit here."""
        return types.SimpleNamespace(scope=types.SimpleNamespace(limit_core_num=self._limit_core_num))

    @contextlib.contextmanager
    def _limit_core_num(self, aicore: int, vector: int) -> Iterator[None]:
        previous = dict(self.limit)
        self.set_stream_limit(self.current_stream(), aicore, vector)
        try:
            yield
        finally:
            self.limit = previous

    def is_available(self) -> bool:
        return False  # streams and events are made on first use, as on a machine without the device

    def current_stream(self) -> _Stream:
        if self.main is None:
            self.main = _Stream(self)
        return self.current[-1] if self.current else self.main

    @contextlib.contextmanager
    def stream(self, stream: _Stream) -> Iterator[None]:
        self.current.append(stream)
        try:
            yield
        finally:
            self.current.pop()

    def get_stream_limit(self, stream: _Stream) -> dict[str, int]:
        return dict(self.limit)

    def set_stream_limit(self, stream: _Stream, cube: int, vector: int) -> None:
        self.calls["set_stream_limit"] += 1
        self.limit = {"cube_core_num": cube, "vector_core_num": vector}

    capturing: bool = False  # what is_current_stream_capturing answers (a CUDA graph captured eagerly)

    def is_current_stream_capturing(self) -> bool:
        return self.capturing
