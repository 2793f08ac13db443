"""Stand-ins for the native stream API (``torch.cuda.*``, ``torch.npu.*``) that lower to npudsl's runtime ops.

Every call that orders work becomes the ``torch.ops.npudsl`` op the race checker
reads, keyed by the stream's or event's name:

| call | ops |
| --- | --- |
| ``with stream(s):`` | ``stream_enter(s)`` ... ``stream_exit(s)`` |
| ``e.record(s=None)`` | ``event_record(e)`` on ``s`` (the current stream when ``None``) |
| ``s.wait_event(e)``, ``e.wait(s=None)`` | ``event_wait(e)`` on ``s`` |
| ``s.wait_stream(t)`` | ``event_record("t->s")`` on ``t``, ``event_wait("t->s")`` on ``s`` |
| ``record_stream(x, s)`` | ``record_stream(x, s)`` |

"on ``s``" wraps the op in ``stream_enter(s)``/``stream_exit(s)`` unless ``s`` is
current. The main stream is ``"default"``. A stream or event is named after the
``tag`` local of the function that creates it (the generated ``_stream(tag)`` and
``_event(tag)`` helpers), else ``stream<n>``/``event<n>``; a second object with a
taken name gets ``#2``, ``#3``...

Creating a stream or event inside a compiled region raises :class:`StandinError`:
they must exist before it (made at import, construction or first eager use).
``get_stream_limit``/``set_stream_limit``/``reset_stream_limit`` are wrapped in
``torch._dynamo.disable``: like the real C bindings, dynamo cannot trace them.
"""

from __future__ import annotations

import sys
from typing import Any

import attrs
import torch

from npudsl.errors import NpudslError
from npudsl.runtime._ops import OPS

__all__ = ["Device", "Event", "StandinError", "Stream", "StreamContext", "record_stream"]

DEFAULT_LIMIT = {"cube_core_num": 24, "vector_core_num": 48}  # 910B2 (reference page)
_ACTIVE: list[Device] = []


class StandinError(NpudslError, RuntimeError):
    """Generated code used a stand-in in a way the real device API does not allow."""


def _active(what: str) -> Device:
    if torch.compiler.is_compiling():
        raise StandinError(
            f"{what}() inside a compiled region: streams and events must exist before it "
            "(create them at import, at module construction or at first eager use)"
        )
    if not _ACTIVE:
        raise StandinError(f"{what}() while no device stand-in is installed")
    return _ACTIVE[-1]


def _caller_tag() -> str | None:
    tag = sys._getframe(2).f_locals.get("tag")
    return tag if isinstance(tag, str) else None


class Stream:
    def __init__(self, device: Any = None, priority: int = 0, **_: Any) -> None:
        self.standin = _active("Stream")
        self.priority = priority
        self.name = self.standin.name(_caller_tag(), "stream")

    def __repr__(self) -> str:
        return f"Stream({self.name!r})"

    def wait_event(self, event: Event) -> None:
        entered = self.standin.enter(self)
        OPS["event_wait"](event.name)
        self.standin.leave(self, entered)

    def wait_stream(self, other: Stream) -> None:
        link = f"{other.name}->{self.name}"
        entered = self.standin.enter(other)
        OPS["event_record"](link)
        self.standin.leave(other, entered)
        entered = self.standin.enter(self)
        OPS["event_wait"](link)
        self.standin.leave(self, entered)

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def synchronize(self) -> None:
        """Work runs in program order on the CPU: nothing to wait for."""

    def query(self) -> bool:
        return True


class Event:
    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False, **_: Any
    ) -> None:
        self.standin = _active("Event")
        self.name = self.standin.name(_caller_tag(), "event")

    def __repr__(self) -> str:
        return f"Event({self.name!r})"

    def record(self, stream: Stream | None = None) -> None:
        stream = self.standin.current_stream() if stream is None else stream
        entered = self.standin.enter(stream)
        OPS["event_record"](self.name)
        self.standin.leave(stream, entered)

    def wait(self, stream: Stream | None = None) -> None:
        (self.standin.current_stream() if stream is None else stream).wait_event(self)

    def synchronize(self) -> None:
        """Nothing to wait for on the CPU."""

    def query(self) -> bool:
        return True


class StreamContext:
    """``with torch.cuda.stream(s):`` (``s=None``: no switch, as in torch)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        if self.stream is not None:
            self.stream.standin.stack.append(self.stream)
            OPS["stream_enter"](self.stream.name, self.stream.priority)

    def __exit__(self, *_: Any) -> None:
        if self.stream is not None:
            OPS["stream_exit"](self.stream.name)
            self.stream.standin.stack.pop()


def record_stream(tensor: torch.Tensor, stream: Stream) -> None:
    """``tensor.record_stream(stream)``: dynamo reads that method itself, so generated code is routed here."""
    OPS["record_stream"](tensor, stream.name)


@attrs.define(eq=False)
class Device:
    """One installed ``torch.cuda`` or ``torch.npu`` stand-in: its streams, names and core limits."""

    kind: str  # "cuda" or "npu"
    made: list[tuple[str, str]] = attrs.Factory(list)  # ("stream" | "event", name) of each object made, in order
    stack: list[Stream] = attrs.Factory(list)
    limits: dict[str, dict[str, int]] = attrs.Factory(dict)

    def main(self) -> Stream:
        main = Stream.__new__(Stream)
        main.standin, main.priority, main.name = self, 0, "default"
        self.stack.append(main)
        return main

    def name(self, tag: str | None, kind: str) -> str:
        base = tag or f"{kind}{sum(k == kind for k, _ in self.made) + 1}"
        taken = sum(k == kind and n.split("#")[0] == base for k, n in self.made)
        chosen = base if taken == 0 else f"{base}#{taken + 1}"
        self.made.append((kind, chosen))
        return chosen

    def current_stream(self, device: Any = None) -> Stream:
        return self.stack[-1]

    def stream(self, stream: Stream | None) -> StreamContext:
        return StreamContext(stream)

    def enter(self, stream: Stream) -> bool:
        """Make ``stream`` current for one op; ``False`` when it already is."""
        if stream is self.stack[-1]:
            return False
        OPS["stream_enter"](stream.name, stream.priority)
        return True

    def leave(self, stream: Stream, entered: bool) -> None:
        if entered:
            OPS["stream_exit"](stream.name)
