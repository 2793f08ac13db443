"""Stream calls bound by plain statements: the join waits just before the first use."""

import torch
from torch import nn

from npudsl import on_stream


class Bound(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2, x

    def forward(self, x):
        a, b = self.side(x)
        c: torch.Tensor = torch.relu(x)
        self.side(c)
        return a + b + c


class Named(nn.Module):
    """A call given an object its caller fills: the tensors its body reads there are kept by name (``parts[0].t``)."""

    def __init__(self):
        super().__init__()
        self.parts = [Part(), Part()]

    @on_stream("side")
    def send(self, part: "Part"):
        return part.t + 1

    def forward(self, x):
        parts = self.parts
        parts[0].prepare(x)
        y = self.send(parts[0])
        z = torch.relu(x)
        return y + z


class Part:
    def prepare(self, x):
        self.t = x * 2
