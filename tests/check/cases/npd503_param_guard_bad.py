"""NPD503: the stream's guard is a parameter, which the joining call sites cannot see."""

from torch import nn

from npudsl import on_stream


class Guarded(nn.Module):
    @on_stream("side", when="enabled")  # W: NPD503@6
    def branch(self, x, enabled=True):
        return x

    @on_stream("side", when="options.multistream")  # W: NPD503@6
    def other(self, x, *, options):
        return x

    def forward(self, x):
        a = self.branch(x, True)
        b = self.other(x, options=None)
        return a + b
