"""NPD513: a guard reads an attribute that its class never sets and that is close to nothing it defines."""

from torch import nn

from npudsl import on_stream


class Config:
    LIMIT = 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.multistream = True

    @on_stream("side", when="self.overlap")  # W: NPD513@6
    def branch(self, x):
        return x

    @on_stream("other", when="Config.MULTISTREAM")  # W: NPD513@6
    def other(self, x):
        return x

    @on_stream("outside", when="self.set_by_the_loader")  # noqa: NPD513  W: NPD513@6
    def loaded(self, x):
        return x

    def forward(self, x):
        a = self.branch(x)
        b = self.other(x)
        c = self.loaded(x)
        return a + b + c
