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


_EXPERT_FORK = functools.partial(_event, "on_stream_class.Expert.forward.fork")
_EXPERT_JOIN = functools.partial(_event, "on_stream_class.Expert.forward.join")


class Expert(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        _EXPERT_FORK().record()
        with torch.cuda.stream(_stream("expert", 0)):
            torch.cuda.current_stream().wait_event(_EXPERT_FORK())
            _record_stream(x, _stream("expert"))
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
        torch.cuda.current_stream().wait_event(_EXPERT_JOIN())
        return main + side
