"""Two streams that split the device exactly (examples/core_split.py); one stream may change its limit."""

from torch import nn

from npudsl import core_limit, on_stream


class Split(nn.Module):
    @on_stream("side")
    @core_limit(8, 16)
    def side_branch(self, x):
        return x

    @on_stream("side")
    @core_limit(4, 8)
    def side_tail(self, x):
        return x

    @core_limit(16, 32)
    def main_branch(self, x):
        return x

    @core_limit(16, 24)
    def main_only(self, x):
        return x

    def forward(self, x):
        side = self.side_branch(x)
        tail = self.side_tail(x)
        main = self.main_branch(x)
        return main + side + tail
