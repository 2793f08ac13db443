import torch
from torch import nn


class Blocking(nn.Module):
    def nonzero(self, x):
        return torch.nonzero(x)
