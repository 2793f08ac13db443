import torch
from torch import nn

import config
import functools
from contextlib import nullcontext

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


_SIDE_FORK = functools.partial(_event, "when_guards.Guarded.side.fork")
_SIDE_JOIN = functools.partial(_event, "when_guards.Guarded.side.join")
_READY = functools.partial(_event, "when_guards.Guarded.ready")


class Guarded(nn.Module):
    def __init__(self, multistream=True):
        super().__init__()
        self.multistream = multistream

    def side(self, x):
        caller_stream = torch.cuda.current_stream()
        if self.multistream:
            _SIDE_FORK().record()
        with torch.cuda.stream(_stream("side", 0)) if self.multistream else nullcontext():
            if self.multistream:
                torch.cuda.current_stream().wait_event(_SIDE_FORK())
                _record_stream(x, _stream("side"))
            out = x * 2
            if self.multistream:
                _record_stream(out, caller_stream)
                _SIDE_JOIN().record()
            return out

    def produce(self, x):
        with torch.cuda.stream(_stream("producer", 0)) if self.multistream else nullcontext():
            out = x * 3
            if self.multistream:
                _READY().record()
            return out

    def consume(self, x):
        if self.multistream:
            torch.cuda.current_stream().wait_event(_READY())
        return x + 1

    def forward(self, x):
        y = self.side(x)
        z = x - 1
        if self.multistream:
            torch.cuda.current_stream().wait_event(_SIDE_JOIN())
        return y + z
