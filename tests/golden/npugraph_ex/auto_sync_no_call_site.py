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


_SIMPLE_FORK = functools.partial(_event, "auto_sync_no_call_site.Lonely.simple.fork")
_SIMPLE_JOIN = functools.partial(_event, "auto_sync_no_call_site.Lonely.simple.join")
_BRANCHING_FORK = functools.partial(_event, "auto_sync_no_call_site.Lonely.branching.fork")
_BRANCHING_JOIN = functools.partial(_event, "auto_sync_no_call_site.Lonely.branching.join")


class Lonely(nn.Module):
    def simple(self, x):
        _SIMPLE_FORK().record()
        with torch.npu.stream(_stream("side", 0)):
            torch.npu.current_stream().wait_event(_SIMPLE_FORK())
            x.record_stream(_stream("side"))
            y = x + 1
            out = y * 2
            _SIMPLE_JOIN().record()
        torch.npu.current_stream().wait_event(_SIMPLE_JOIN())
        return out

    def branching(self, x):
        _BRANCHING_FORK().record()
        try:
            with torch.npu.stream(_stream("side", 0)):
                torch.npu.current_stream().wait_event(_BRANCHING_FORK())
                x.record_stream(_stream("side"))
                if x.sum() > 0:
                    _BRANCHING_JOIN().record()
                    return x
                out = -x
                _BRANCHING_JOIN().record()
                return out
        finally:
            torch.npu.current_stream().wait_event(_BRANCHING_JOIN())
