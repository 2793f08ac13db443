import torch
from torch import nn

from npudsl import on_stream


class Nested(nn.Module):
    @on_stream("inner")
    def inner(self, x):
        return x * 2

    @on_stream("outer")
    def outer(self, x):
        doubled = self.inner(x)
        own = x + 1
        return own + doubled

    def forward(self, x):
        result = self.outer(x)
        return result - 1
