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


_SIDE_FORK = functools.partial(_event, "auto_sync_join_placement.Overlap.side.fork")
_SIDE_JOIN = functools.partial(_event, "auto_sync_join_placement.Overlap.side.join")


class Overlap(nn.Module):
    def side(self, x):
        _SIDE_FORK().record()
        with torch.cuda.stream(_stream("side", 0)):
            torch.cuda.current_stream().wait_event(_SIDE_FORK())
            _record_stream(x, _stream("side"))
            out = x.exp()
            _SIDE_JOIN().record()
            return out

    def forward(self, x, flag: bool):
        s = self.side(x)
        a = x * 2
        b = a + 1
        torch.cuda.current_stream().wait_event(_SIDE_JOIN())
        if flag:
            b = b + s
        return b

    def discarded(self, x):
        self.side(x)
        torch.cuda.current_stream().wait_event(_SIDE_JOIN())
        return x + 1
