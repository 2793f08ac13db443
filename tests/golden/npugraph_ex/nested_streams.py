import torch
from torch import nn
import functools

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


_INNER_FORK = functools.partial(_event, "nested_streams.Nested.inner.fork")
_INNER_JOIN = functools.partial(_event, "nested_streams.Nested.inner.join")
_OUTER_FORK = functools.partial(_event, "nested_streams.Nested.outer.fork")
_OUTER_JOIN = functools.partial(_event, "nested_streams.Nested.outer.join")


class Nested(nn.Module):
    def inner(self, x):
        _INNER_FORK().record()
        with torch.npu.stream(_stream("inner", 0)):
            torch.npu.current_stream().wait_event(_INNER_FORK())
            x.record_stream(_stream("inner"))
            out = x * 2
            _INNER_JOIN().record()
            return out

    def outer(self, x):
        _OUTER_FORK().record()
        with torch.npu.stream(_stream("outer", 0)):
            torch.npu.current_stream().wait_event(_OUTER_FORK())
            x.record_stream(_stream("outer"))
            doubled = self.inner(x)
            own = x + 1
            torch.npu.current_stream().wait_event(_INNER_JOIN())
            out = own + doubled
            _OUTER_JOIN().record()
            return out

    def forward(self, x):
        result = self.outer(x)
        torch.npu.current_stream().wait_event(_OUTER_JOIN())
        return result - 1
