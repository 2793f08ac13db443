import torch
from torch import nn
from npudsl import runtime


class Short(nn.Module):
    def documented(self, x):
        """The docstring stays first."""
        with runtime.stream("side", 0):
            return x + 1

    def one_liner(self, x):
        with runtime.core_limit(2, 4):
            return x - 1
