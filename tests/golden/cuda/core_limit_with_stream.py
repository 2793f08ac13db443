import torch
from torch import nn


class Split(nn.Module):
    def side(self, x):
        return torch.relu(x)
