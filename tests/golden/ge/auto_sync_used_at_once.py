import torch
from torch import nn
import torchair


class AtOnce(nn.Module):
    def side(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            return x.cos()

    def forward(self, x):
        return self.side(x) + x
