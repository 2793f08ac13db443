"""NPD502: automatic stream functions nobody visibly calls."""

from torch import nn

from npudsl import on_stream


class Lonely(nn.Module):
    @on_stream("side")  # W: NPD502@6
    def simple(self, x):
        return x

    def forward(self, x):
        return x


@on_stream("aux", priority=0)  # W: NPD502@2
class Unused(nn.Module):
    def forward(self, x):
        return x


@on_stream("mlp")  # W: NPD502@2
class MLP(nn.Module):
    def forward(self, x):
        return x * 2


class Layer(nn.Module):
    def __init__(self, moe):
        super().__init__()
        if moe:
            self.feed_forward = Unused()
        else:
            self.feed_forward = MLP()

    def forward(self, x):
        y = self.feed_forward(x)
        z = x + 1
        return y + z
