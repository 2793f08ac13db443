import torch
import torchair
from torch import nn


class Looped(nn.Module):
    def side(self, x):
        return x.sin()

    def forward(self, x):
        acc = torch.zeros_like(x)
        for step in range(3):
            fork_token = torchair.ops.record()
            with torchair.scope.npu_stream_switch("side", 0):
                torchair.ops.wait([fork_token])
                s = self.side(x)
            x = x + step
        return acc + x
