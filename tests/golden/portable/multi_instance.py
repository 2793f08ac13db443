"""Sixty layers share one stream and one pair of events: torchair tags are process-global."""

import torch
from npudsl import runtime
from torch import nn


class Shared(nn.Module):
    def forward(self, x):
        return x * 0.5


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def enter(self, x):
        out = x + 1
        runtime.record("multi_instance.Layer.layer_in")
        return out

    def post(self, x):
        runtime.wait("multi_instance.Layer.layer_in")
        return x.tanh()

    def forward(self, x):
        x = self.enter(x)
        with runtime.stream("post", 0):
            runtime.record_stream(x, "post")
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
