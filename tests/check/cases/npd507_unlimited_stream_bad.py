"""NPD507: a core-limited stream beside a stream that may take every core."""

from torch import nn

from npudsl import core_limit, on_stream


class HalfLimited(nn.Module):
    @on_stream("side")
    @core_limit(8, 16)  # W: NPD507@6
    def side_branch(self, x):
        return x

    def forward(self, x):
        s = self.side_branch(x)
        return s
