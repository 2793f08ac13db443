import torch
from torch import nn


class Split(nn.Module):
    def halves(self, x):
        left, right = x.chunk(2)
        return left, right.relu(), (left * 2)

    def packed(self, x):
        return torch.split(x, 2)
