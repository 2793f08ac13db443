import torch
from torch import nn
import functools

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.cuda.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.cuda.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.cuda.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.cuda.Event] = {}


def _event(tag: str) -> torch.cuda.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.cuda.Event()
    return _EVENTS[tag]


def _record_stream(tensor: torch.Tensor, stream: torch.cuda.Stream) -> None:
    """``tensor.record_stream(stream)``, except while a CUDA graph is captured eagerly, where it would keep
    the block alive until capture ends. Traced code always records."""
    if torch.compiler.is_compiling() or not torch.cuda.is_current_stream_capturing():
        tensor.record_stream(stream)


_INNER_FORK = functools.partial(_event, "nested_streams.Nested.inner.fork")
_INNER_JOIN = functools.partial(_event, "nested_streams.Nested.inner.join")
_OUTER_FORK = functools.partial(_event, "nested_streams.Nested.outer.fork")
_OUTER_JOIN = functools.partial(_event, "nested_streams.Nested.outer.join")


class Nested(nn.Module):
    def inner(self, x):
        _INNER_FORK().record()
        with torch.cuda.stream(_stream("inner", 0)):
            torch.cuda.current_stream().wait_event(_INNER_FORK())
            _record_stream(x, _stream("inner"))
            out = x * 2
            _INNER_JOIN().record()
            return out

    def outer(self, x):
        _OUTER_FORK().record()
        with torch.cuda.stream(_stream("outer", 0)):
            torch.cuda.current_stream().wait_event(_OUTER_FORK())
            _record_stream(x, _stream("outer"))
            doubled = self.inner(x)
            own = x + 1
            torch.cuda.current_stream().wait_event(_INNER_JOIN())
            out = own + doubled
            _OUTER_JOIN().record()
            return out

    def forward(self, x):
        result = self.outer(x)
        torch.cuda.current_stream().wait_event(_OUTER_JOIN())
        return result - 1
