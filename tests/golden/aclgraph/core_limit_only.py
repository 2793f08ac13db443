import torch
import torchair
from torch import nn


class Blocking(nn.Module):
    def nonzero(self, x):
        with torchair.scope.limit_core_num(6, 12):
            return torch.nonzero(x)
