import torch
from torch import nn

from npudsl import on_stream


class AtOnce(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x.cos()

    def forward(self, x):
        return self.side(x) + x
