import torch
from torch import nn
import functools
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


_SHARED_EXPERT_FORK = functools.partial(_event, "shared_expert.SharedExpert.forward.fork")
_SHARED_EXPERT_JOIN = functools.partial(_event, "shared_expert.SharedExpert.forward.join")


class SharedExpert(nn.Module):
    def __init__(self, hidden, multistream=True):
        super().__init__()
        self.multistream = multistream
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        caller_stream = torch.npu.current_stream()
        if self.multistream:
            _SHARED_EXPERT_FORK().record()
        with torch.npu.stream(_stream("shared", 0)) if self.multistream else nullcontext():
            if self.multistream:
                torch.npu.current_stream().wait_event(_SHARED_EXPERT_FORK())
                x.record_stream(_stream("shared"))
            out = self.proj(x)
            if self.multistream:
                out.record_stream(caller_stream)
                _SHARED_EXPERT_JOIN().record()
            return out
