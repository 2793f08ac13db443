import torch
from torch import nn

from npudsl import core_limit, on_stream


class Short(nn.Module):
    @on_stream("side", sync="manual")
    def documented(self, x):
        """The docstring stays first."""
        return x + 1

    @core_limit(2, 4)
    def one_liner(self, x): return x - 1
