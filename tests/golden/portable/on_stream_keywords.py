import torch
from torch import nn
from npudsl import runtime


class Block(nn.Module):
    def branch(self, x):
        with runtime.stream("side", 1):
            return torch.relu(x)
