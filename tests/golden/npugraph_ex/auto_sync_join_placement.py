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


_SIDE_FORK = functools.partial(_event, "auto_sync_join_placement.Overlap.side.fork")
_SIDE_JOIN = functools.partial(_event, "auto_sync_join_placement.Overlap.side.join")


class Overlap(nn.Module):
    def side(self, x):
        _SIDE_FORK().record()
        with torch.npu.stream(_stream("side", 0)):
            torch.npu.current_stream().wait_event(_SIDE_FORK())
            x.record_stream(_stream("side"))
            out = x.exp()
            _SIDE_JOIN().record()
            return out

    def forward(self, x, flag: bool):
        s = self.side(x)
        a = x * 2
        b = a + 1
        torch.npu.current_stream().wait_event(_SIDE_JOIN())
        if flag:
            b = b + s
        return b

    def discarded(self, x):
        self.side(x)
        torch.npu.current_stream().wait_event(_SIDE_JOIN())
        return x + 1
