"""Sixty layers share one stream and one pair of events: torchair tags are process-global."""

import torch
from npudsl import runtime
from torch import nn


class Shared(nn.Module):
    def forward(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        runtime.record("multi_instance.Shared.forward.fork")
        with runtime.stream("shared", 0):
            runtime.wait("multi_instance.Shared.forward.fork")
            if join:
                runtime.record_stream(x, "shared")
            out = x * 0.5
            if join:
                runtime.record_stream(out, caller_stream)
            runtime.record("multi_instance.Shared.forward.join")
        if join:
            runtime.wait("multi_instance.Shared.forward.join")
        return out


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def enter(self, x):
        out = x + 1
        runtime.record("multi_instance.Layer.layer_in")
        return out

    def post(self, x):
        caller_stream = runtime.current_stream()
        with runtime.stream("post", 0):
            runtime.record_stream(x, "post")
            runtime.wait("multi_instance.Layer.layer_in")
            out = x.tanh()
            runtime.record_stream(out, caller_stream)
            return out

    def forward(self, x):
        x = self.enter(x)
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
