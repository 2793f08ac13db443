"""The same side stream without a core limit: nothing for CUDA to ignore (no NPD590 with --target cuda)."""
# target: cuda

from torch import nn

from npudsl import on_stream


class Block(nn.Module):
    @on_stream("side")
    def branch(self, x):
        return x * 2

    def forward(self, x):
        y = self.branch(x)
        return x + y
