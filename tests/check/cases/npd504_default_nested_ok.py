"""An @on_stream("default") function called from main-stream code."""

from torch import nn

from npudsl import on_stream


class Flat(nn.Module):
    @on_stream("default")
    def main_part(self, x):
        return x + 1

    @on_stream("side")
    def branch(self, x):
        return x * 2

    def forward(self, x):
        m = self.main_part(x)
        b = self.branch(x)
        return m + b
