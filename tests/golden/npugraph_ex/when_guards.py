import torch
from torch import nn

import config
import contextlib
import functools
from collections.abc import Iterator
from contextlib import nullcontext

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.npu.Event] = {}


def _event(tag: str) -> torch.npu.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.npu.Event()
    return _EVENTS[tag]


@contextlib.contextmanager
def _core_limit(aicore: int, vector: int) -> Iterator[None]:
    """The current stream's ops use at most ``aicore`` cube and ``vector`` vector cores; the previous
    limit comes back on exit."""
    stream = torch.npu.current_stream()
    previous = torch.npu.get_stream_limit(stream)
    torch.npu.set_stream_limit(stream, aicore, vector)
    try:
        yield
    finally:
        torch.npu.set_stream_limit(stream, previous["cube_core_num"], previous["vector_core_num"])


_SIDE_FORK = functools.partial(_event, "when_guards.Guarded.side.fork")
_SIDE_JOIN = functools.partial(_event, "when_guards.Guarded.side.join")
_READY = functools.partial(_event, "when_guards.Guarded.ready")


class Guarded(nn.Module):
    def __init__(self, multistream=True):
        super().__init__()
        self.multistream = multistream

    def side(self, x):
        caller_stream = torch.npu.current_stream()
        if self.multistream:
            _SIDE_FORK().record()
        with (
            torch.npu.stream(_stream("side", 0)) if self.multistream else nullcontext(),
            _core_limit(8, 16) if config.LIMIT_CORES else nullcontext(),
        ):
            if self.multistream:
                torch.npu.current_stream().wait_event(_SIDE_FORK())
                x.record_stream(_stream("side"))
            out = x * 2
            if self.multistream:
                out.record_stream(caller_stream)
                _SIDE_JOIN().record()
            return out

    def produce(self, x):
        with torch.npu.stream(_stream("producer", 0)) if self.multistream else nullcontext():
            out = x * 3
            if self.multistream:
                _READY().record()
            return out

    def consume(self, x):
        if self.multistream:
            torch.npu.current_stream().wait_event(_READY())
        return x + 1

    def forward(self, x):
        y = self.side(x)
        z = x - 1
        if self.multistream:
            torch.npu.current_stream().wait_event(_SIDE_JOIN())
        return y + z
