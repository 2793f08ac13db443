"""Guards rooted at self or at a module global."""

from torch import nn

from npudsl import on_stream

MULTISTREAM = True


class Guarded(nn.Module):
    multistream = True

    @on_stream("side", when="self.multistream")
    def branch(self, x):
        return x

    @on_stream("other", when="MULTISTREAM")
    def other(self, x):
        return x

    def forward(self, x):
        a = self.branch(x)
        b = self.other(x)
        return a + b
