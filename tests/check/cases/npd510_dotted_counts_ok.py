"""Counts written as numbers are verified (no NPD510)."""

from torch import nn

from npudsl import core_limit, on_stream


class Numbers(nn.Module):
    @on_stream("side")
    @core_limit(8, 16)
    def side(self, x):
        return x * 2

    @core_limit(16, 32)
    def forward(self, x):
        y = self.side(x)
        return y + x
