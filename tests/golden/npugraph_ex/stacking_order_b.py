import torch
from torch import nn
import contextlib
import functools
from collections.abc import Iterator

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


_GO = functools.partial(_event, "stacking_order_b.Ordered.go")
_DONE = functools.partial(_event, "stacking_order_b.Ordered.done")


class Ordered(nn.Module):
    def start(self, x):
        out = x + 1
        _GO().record()
        return out

    def work(self, x):
        caller_stream = torch.npu.current_stream()
        with torch.npu.stream(_stream("s", 0)), _core_limit(4, 8):
            torch.npu.current_stream().wait_event(_GO())
            out = x * 2
            out.record_stream(caller_stream)
            _DONE().record()
            return out

    def finish(self, y):
        torch.npu.current_stream().wait_event(_DONE())
        return y - 1
