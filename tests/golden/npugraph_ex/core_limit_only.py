import torch
from torch import nn


class Blocking(nn.Module):
    def nonzero(self, x):
        with torch.npu.npugraph_ex.scope.limit_core_num(6, 12):
            return torch.nonzero(x)
