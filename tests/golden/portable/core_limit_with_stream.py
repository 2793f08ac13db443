import torch
from npudsl import runtime
from torch import nn


class Split(nn.Module):
    def side(self, x):
        with runtime.core_limit(8, 16):
            return torch.relu(x)
