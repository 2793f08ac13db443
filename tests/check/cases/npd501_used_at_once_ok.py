"""Stream calls bound by plain statements: the join waits just before the first use."""

import torch
from torch import nn

from npudsl import on_stream


class Bound(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2, x

    def forward(self, x):
        a, b = self.side(x)
        c: torch.Tensor = torch.relu(x)
        self.side(c)
        return a + b + c
