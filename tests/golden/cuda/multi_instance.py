"""Sixty layers share one stream and one pair of events: torchair tags are process-global."""

import functools

import torch
from torch import nn

# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
_STREAMS: dict[str, torch.cuda.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.cuda.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.cuda.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.cuda.Event] = {}


def _event(table: dict[str, torch.cuda.Event], tag: str) -> torch.cuda.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = torch.cuda.Event()
    return table[tag]


def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.cuda.is_available():
        _stream("post", 0)
        _LAYER_IN()


def _record_stream(value, stream, objects=True) -> None:
    """``record_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."""
    if isinstance(value, torch.Tensor):
        value.record_stream(stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_stream(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            _record_stream(item, stream, objects)
    elif objects and not isinstance(value, (type, torch.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            _record_stream(item, stream, False)


_LAYER_IN = functools.partial(_event, _EVENTS, "multi_instance.Layer.layer_in")


class Shared(nn.Module):
    def forward(self, x):
        return x * 0.5


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()
        _create_streams()

    def enter(self, x):
        out = x + 1
        _LAYER_IN().record()
        return out

    def post(self, x):
        torch.cuda.current_stream().wait_event(_LAYER_IN())
        return x.tanh()

    def forward(self, x):
        x = self.enter(x)
        with torch.cuda.stream(_stream("post", 0)):
            _record_stream(x, _stream("post"))
            p = self.post(x)
        s = self.shared(x)
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
