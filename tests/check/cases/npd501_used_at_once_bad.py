"""NPD501: stream calls whose results are used at once, so nothing overlaps them."""

import torch
from torch import nn

from npudsl import on_stream


class AtOnce(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def forward(self, x):
        y = torch.relu(self.side(x))  # W: NPD501@24
        z = self.side(x)
        return self.side(y) + z  # W: NPD501@16


@on_stream("aux")
def helper(x):
    return x + 1


def use(x):
    return helper(x) * 2  # W: NPD501@12


class Stored(nn.Module):
    """A result stored into an item of a list only the caller reaches is bound; into what may be a tensor, not."""

    def __init__(self):
        super().__init__()
        self.parts = [Part(), Part()]

    @on_stream("side")
    def side(self, x):
        return x * 2

    @on_stream("side")
    def send(self, part: "Part"):
        return getattr(part, "t") + 1  # the object passed on: which tensors it reads is not named

    def forward(self, x, buf):
        outs = [None, None]
        for i in range(2):
            outs[i] = self.side(x + i)
        buf[0] = self.side(x)  # W: NPD501@18
        parts = self.parts
        parts[0].prepare(x)
        y = self.send(parts[0])  # W: NPD501@13
        return torch.cat(outs) + y


class Part:
    def prepare(self, x):
        self.t = x * 2
