import torch
from torch import nn
import torchair


class Blocking(nn.Module):
    def nonzero(self, x):
        with torchair.scope.limit_core_num(6, 12):
            return torch.nonzero(x)
