"""A core limit has no CUDA counterpart: with --target cuda it is ignored, with a warning at the decorator."""
# target: cuda

from torch import nn

from npudsl import core_limit, on_stream


class Block(nn.Module):
    @on_stream("side")
    @core_limit(8, 16)  # W: NPD590@6
    def branch(self, x):
        return x * 2

    @core_limit(16, 32)  # W: NPD590@6
    def forward(self, x):
        y = self.branch(x)
        return x + y
