"""NPD302: two streams whose core limits add up to more than the device (seed 004)."""

from torch import nn

from npudsl import core_limit, on_stream


class Split(nn.Module):
    @on_stream("side")
    @core_limit(12, 16)
    def side_branch(self, x):
        return x

    @core_limit(16, 32)  # E: NPD302@6
    def main_branch(self, x):
        return x

    @on_stream("other")
    @core_limit(8, 40)  # E: NPD302@6
    def other_branch(self, x):
        return x

    def forward(self, x):
        side = self.side_branch(x)
        other = self.other_branch(x)
        main = self.main_branch(x)
        return main + side + other
