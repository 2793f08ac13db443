import torch
from torch import nn


class Block(nn.Module):
    def branch(self, x):
        y = torch.relu(x)
        return y * 2
