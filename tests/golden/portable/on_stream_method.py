import torch
from torch import nn
from npudsl import runtime


class Block(nn.Module):
    def branch(self, x):
        with runtime.stream("side", 0):
            y = torch.relu(x)
            return y * 2
