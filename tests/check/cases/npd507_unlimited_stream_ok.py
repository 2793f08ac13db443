"""Both streams limited; a core limit with no side stream at all."""

from torch import nn

from npudsl import core_limit, on_stream


class Split(nn.Module):
    @on_stream("side")
    @core_limit(8, 16)
    def side_branch(self, x):
        return x

    @core_limit(16, 32)
    def main_branch(self, x):
        return x

    def forward(self, x):
        s = self.side_branch(x)
        m = self.main_branch(x)
        return s + m


@core_limit(4, 8)
def alone(x):
    return x
