"""Guards every call site reads: a parameter passed plainly or by default, the receiver's attribute."""

from torch import nn

from npudsl import on_stream


class Block(nn.Module):
    multistream = True

    @on_stream("side", when="enabled")
    def branch(self, x, enabled=False):
        return x

    @on_stream("side", when="self.multistream")
    def other(self, x):
        return x

    def forward(self, x, flag: bool):
        a = self.branch(x, flag)
        b = self.branch(x, enabled=flag and self.multistream)
        c = self.branch(x)
        d = self.other(x)
        return a + b + c + d
