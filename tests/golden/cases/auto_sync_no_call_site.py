import torch
from torch import nn

from npudsl import on_stream


class Lonely(nn.Module):
    @on_stream("side")
    def simple(self, x):
        y = x + 1
        return y * 2

    @on_stream("side")
    def branching(self, x):
        if x.sum() > 0:
            return x
        return -x
