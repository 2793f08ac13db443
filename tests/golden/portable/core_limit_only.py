import torch
from torch import nn
from npudsl import runtime


class Blocking(nn.Module):
    def nonzero(self, x):
        with runtime.core_limit(6, 12):
            return torch.nonzero(x)
