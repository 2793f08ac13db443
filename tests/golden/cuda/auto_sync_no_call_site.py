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


_SIMPLE_FORK = functools.partial(_event, "auto_sync_no_call_site.Lonely.simple.fork")
_SIMPLE_JOIN = functools.partial(_event, "auto_sync_no_call_site.Lonely.simple.join")
_BRANCHING_FORK = functools.partial(_event, "auto_sync_no_call_site.Lonely.branching.fork")
_BRANCHING_JOIN = functools.partial(_event, "auto_sync_no_call_site.Lonely.branching.join")


class Lonely(nn.Module):
    def simple(self, x):
        _SIMPLE_FORK().record()
        with torch.cuda.stream(_stream("side", 0)):
            torch.cuda.current_stream().wait_event(_SIMPLE_FORK())
            _record_stream(x, _stream("side"))
            y = x + 1
            out = y * 2
            _SIMPLE_JOIN().record()
        torch.cuda.current_stream().wait_event(_SIMPLE_JOIN())
        return out

    def branching(self, x):
        _BRANCHING_FORK().record()
        try:
            with torch.cuda.stream(_stream("side", 0)):
                torch.cuda.current_stream().wait_event(_BRANCHING_FORK())
                _record_stream(x, _stream("side"))
                if x.sum() > 0:
                    _BRANCHING_JOIN().record()
                    return x
                out = -x
                _BRANCHING_JOIN().record()
                return out
        finally:
            torch.cuda.current_stream().wait_event(_BRANCHING_JOIN())
