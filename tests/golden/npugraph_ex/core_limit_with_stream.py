import torch
from torch import nn


class Split(nn.Module):
    def side(self, x):
        with torch.npu.npugraph_ex.scope.limit_core_num(8, 16):
            return torch.relu(x)
