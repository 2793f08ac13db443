import torch
import torchair
from torch import nn


class Nested(nn.Module):
    def inner(self, x):
        return x * 2

    def outer(self, x):
        with torchair.scope.npu_stream_switch("inner", 0):
            doubled = self.inner(x)
        own = x + 1
        return own + doubled

    def forward(self, x):
        with torchair.scope.npu_stream_switch("outer", 0):
            result = self.outer(x)
        return result - 1
