"""NPD515: values made between two calls on one side stream give the second call a fork of its own."""

import torch
from torch import nn

from npudsl import on_stream


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.randn(16, 4)

    @on_stream("side")
    def project(self, x):
        return x * 2

    @on_stream("side")
    def rotate(self, kv, cos, sin):
        return kv * cos + sin

    def forward(self, x, positions):
        kv = self.project(x)
        cos, sin = self.table[positions], self.table[positions + 1]  # W: NPD515@9
        out = self.rotate(kv, cos, sin)
        y = x.relu()
        return out + y

    def two_producers(self, x, positions):
        kv = self.project(x)
        q = x.sum()
        cos = self.table[positions]  # W: NPD515@9
        sin: torch.Tensor = self.table[positions + 1]
        out = self.rotate(kv, cos, sin)
        y = x.relu()
        return out + q + y
