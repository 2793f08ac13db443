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
