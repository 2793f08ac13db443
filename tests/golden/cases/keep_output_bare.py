import torch
from torch import nn

from npudsl import keep_output, on_stream


class Producer(nn.Module):
    @on_stream("side", sync="manual")
    @keep_output
    def pair(self, x):
        a = x + 1
        return a, x * 2
