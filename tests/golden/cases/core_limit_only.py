import torch
from torch import nn

from npudsl import core_limit


class Blocking(nn.Module):
    @core_limit(6, 12)
    def nonzero(self, x):
        return torch.nonzero(x)
