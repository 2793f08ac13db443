"""Sixty layers share one stream and one pair of events: torchair tags are process-global."""

import torch
import torchair
from torch import nn

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for


class Shared(nn.Module):
    def forward(self, x):
        return x * 0.5


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def enter(self, x):
        out = x + 1
        _EVENT_TOKENS["multi_instance.Layer.layer_in"] = torchair.ops.record()
        return out

    def post(self, x):
        if "multi_instance.Layer.layer_in" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("multi_instance.Layer.layer_in")])
        return x.tanh()

    def forward(self, x):
        x = self.enter(x)
        with torchair.scope.npu_stream_switch("post", 0):
            p = self.post(x)
        fork_token = torchair.ops.record()
        with torchair.scope.npu_stream_switch("shared", 0):
            torchair.ops.wait([fork_token])
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
