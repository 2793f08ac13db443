import torch
from torch import nn


class Block(nn.Module):
    def branch(self, x):
        return torch.relu(x)
