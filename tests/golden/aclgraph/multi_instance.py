"""Sixty layers share one stream and one pair of events: torchair tags are process-global."""

import torch
import torchair
from torch import nn


def _record_tagged_stream(value, stream, objects=True) -> None:
    """``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."""
    if isinstance(value, torch.Tensor):
        torchair.ops.npu_record_tagged_stream(value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_tagged_stream(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            _record_tagged_stream(item, stream, objects)
    elif objects and not isinstance(value, (type, torch.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            _record_tagged_stream(item, stream, False)


def _tagged_event(tag: str) -> str:
    """``tag``, with torchair's event made for it unless this process has one already."""
    try:
        torchair.ops.npu_create_tagged_event(tag=tag)
    except ValueError:  # made already: a reload, or another module that names the same shared event
        pass
    return tag


# torchair's tagged events, made once per process and named by tag.
_LAYER_IN = _tagged_event(f"{__name__}.Layer.layer_in")


class Shared(nn.Module):
    def forward(self, x):
        return x * 0.5


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def enter(self, x):
        out = x + 1
        torch.ops.air.tagged_event_record(_LAYER_IN)
        return out

    def post(self, x):
        torch.ops.air.tagged_event_wait(_LAYER_IN)
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
