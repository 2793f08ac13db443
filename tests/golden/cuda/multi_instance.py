"""Sixty layers share one stream and one pair of events: torchair tags are process-global."""

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


_SHARED_FORK = functools.partial(_event, "multi_instance.Shared.forward.fork")
_SHARED_JOIN = functools.partial(_event, "multi_instance.Shared.forward.join")
_LAYER_IN = functools.partial(_event, "multi_instance.Layer.layer_in")


class Shared(nn.Module):
    def forward(self, x):
        _SHARED_FORK().record()
        with torch.cuda.stream(_stream("shared", 0)):
            torch.cuda.current_stream().wait_event(_SHARED_FORK())
            _record_stream(x, _stream("shared"))
            out = x * 0.5
            _SHARED_JOIN().record()
            return out


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def enter(self, x):
        out = x + 1
        _LAYER_IN().record()
        return out

    def post(self, x):
        with torch.cuda.stream(_stream("post", 0)):
            torch.cuda.current_stream().wait_event(_LAYER_IN())
            return x.tanh()

    def forward(self, x):
        x = self.enter(x)
        p = self.post(x)
        s = self.shared(x)
        torch.cuda.current_stream().wait_event(_SHARED_JOIN())
        return x + s, p


class Stack(nn.Module):
    def __init__(self, depth=60):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(depth))

    def forward(self, x):
        outs = []
        for layer in self.layers:
            x, p = layer(x)
            outs.append(p)
        return x, outs
