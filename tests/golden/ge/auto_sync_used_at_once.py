import torch
import torchair
from torch import nn


class AtOnce(nn.Module):
    def side(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            return x.cos()

    def forward(self, x):
        return self.side(x) + x
