import torch
from npudsl import runtime
from torch import nn


class Short(nn.Module):
    def documented(self, x):
        """The docstring stays first."""
        return x + 1

    def one_liner(self, x):
        with runtime.core_limit(2, 4):
            return x - 1
