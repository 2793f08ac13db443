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


_EXPERT_FORK = functools.partial(_event, "on_stream_class.Expert.forward.fork")
_EXPERT_JOIN = functools.partial(_event, "on_stream_class.Expert.forward.join")


class Expert(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        _EXPERT_FORK().record()
        with torch.npu.stream(_stream("expert", 0)):
            torch.npu.current_stream().wait_event(_EXPERT_FORK())
            x.record_stream(_stream("expert"))
            out = self.proj(x)
            _EXPERT_JOIN().record()
            return out


class Layer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.expert = Expert(hidden)
        self.main = nn.Linear(hidden, hidden)

    def forward(self, x):
        side = self.expert(x)
        main = self.main(x)
        torch.npu.current_stream().wait_event(_EXPERT_JOIN())
        return main + side
