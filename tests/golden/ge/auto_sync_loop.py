import torch
import torchair
from torch import nn


class Looped(nn.Module):
    def side(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            return x.sin()

    def forward(self, x):
        acc = torch.zeros_like(x)
        for step in range(3):
            s = self.side(x)
            x = x + step
        return acc + x
