import torch
from torch import nn
from npudsl import runtime


class Split(nn.Module):
    def side(self, x):
        with runtime.stream("side", 0), runtime.core_limit(8, 16):
            return torch.relu(x)
