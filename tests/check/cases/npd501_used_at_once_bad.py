"""NPD501: stream calls whose results are used at once, so nothing overlaps them."""

import torch
from torch import nn

from npudsl import on_stream


class AtOnce(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def forward(self, x):
        y = torch.relu(self.side(x))  # W: NPD501@24
        z = self.side(x)
        return self.side(y) + z  # W: NPD501@16


@on_stream("aux")
def helper(x):
    return x + 1


def use(x):
    return helper(x) * 2  # W: NPD501@12
