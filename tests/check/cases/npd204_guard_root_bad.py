"""NPD204: a guard whose root names nothing the decorated function can read."""

from torch import nn

from npudsl import core_limit, on_stream


@on_stream("side", when="self.multistream")  # E: NPD204@2
def side(x):
    return x * 2


class Block(nn.Module):
    @on_stream("side", when="multistream")  # E: NPD204@6
    def branch(self, x):
        return x

    @core_limit(8, 16, when="cfg.limit")  # E: NPD204@6 W: NPD507@6
    def limited(self, x):
        return x

    def forward(self, x):
        a = self.branch(x)
        b = side(x)
        c = self.limited(x)
        return a + b + c
