import torch
from npudsl import runtime
from torch import nn


class Blocking(nn.Module):
    def nonzero(self, x):
        with runtime.core_limit(6, 12):
            return torch.nonzero(x)
