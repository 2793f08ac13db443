"""Sixty layers share one stream and one pair of events: torchair tags are process-global."""

import torch
import torchair
from torch import nn


def _record_tagged_stream(value, stream) -> None:
    """``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        torchair.ops.npu_record_tagged_stream(value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_tagged_stream(item, stream)
    elif isinstance(value, dict):
        for item in value.values():
            _record_tagged_stream(item, stream)


_TAGGED_EVENTS = vars(torchair.ops).setdefault("npudsl_tagged_events", {})


def _tagged_event(tag: str, origin: str | None = None):
    """The event tagged ``tag``, created once per process. A class's event names its source file ``origin``:
    this file run again (reload, another module name) gets the same event, another file that made ``tag``
    first gets its own. A shared event (``"ns:name"``) names none: it is one event in every file."""
    if origin is not None and _TAGGED_EVENTS.get(tag, (origin,))[0] != origin:
        tag = f"{tag}@{origin}"
    if tag not in _TAGGED_EVENTS:
        _TAGGED_EVENTS[tag] = (origin, torchair.ops.npu_create_tagged_event(tag=tag))
    return _TAGGED_EVENTS[tag][1]


# Tagged events are process-global: each is made here, once per process.
_LAYER_IN = _tagged_event("multi_instance.Layer.layer_in", __file__)


class Shared(nn.Module):
    def forward(self, x):
        return x * 0.5


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def enter(self, x):
        out = x + 1
        torchair.ops.npu_tagged_event_record(_LAYER_IN)
        return out

    def post(self, x):
        torchair.ops.npu_tagged_event_wait(_LAYER_IN)
        return x.tanh()

    def forward(self, x):
        x = self.enter(x)
        with torchair.scope.npu_stream_switch("post", 0):
            _record_tagged_stream(x, "post")
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
