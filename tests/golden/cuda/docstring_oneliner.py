import torch
from torch import nn


class Short(nn.Module):
    def documented(self, x):
        """The docstring stays first."""
        return x + 1

    def one_liner(self, x):
        return x - 1
