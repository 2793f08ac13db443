"""NPD504: an @on_stream("default") function called from code on a side stream (aclgraph)."""

from torch import nn

from npudsl import on_stream


class Nested(nn.Module):
    @on_stream("default")
    def back_to_main(self, x):
        return x + 1

    @on_stream("side")
    def branch(self, x):
        y = self.back_to_main(x)  # W: NPD504@13
        return y

    def forward(self, x):
        b = self.branch(x)
        return b
