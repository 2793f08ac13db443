"""NPD508: a call site that cannot read the callee's guard leaves the join to the callee."""

from torch import nn

from npudsl import on_stream


class Block(nn.Module):
    multistream = True

    @on_stream("side", when="enabled")
    def branch(self, x, enabled):
        return x

    @on_stream("side", when="self.multistream")
    def other(self, x):
        return x

    def forward(self, x, *flags, **options):
        a = self.branch(x, *flags)  # W: NPD508@13
        b = self.branch(x, **options)  # W: NPD508@13
        c = Block.other(self.children_first(), x)  # W: NPD508@13
        return a + b + c

    def children_first(self):
        return self
