import torch
from torch import nn


class AtOnce(nn.Module):
    def side(self, x):
        return x.cos()

    def forward(self, x):
        return self.side(x) + x
