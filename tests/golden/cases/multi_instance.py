"""Sixty layers share one stream and one pair of events: torchair tags are process-global."""

import torch
from torch import nn

from npudsl import after, on_stream, records


@on_stream("shared")
class Shared(nn.Module):
    def forward(self, x):
        return x * 0.5


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    @records("layer_in")
    def enter(self, x):
        return x + 1

    @on_stream("post", sync="manual")
    @after("layer_in")
    def post(self, x):
        return x.tanh()

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
