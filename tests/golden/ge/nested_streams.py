import torch
import torchair
from torch import nn


class Nested(nn.Module):
    def inner(self, x):
        return x * 2

    def outer(self, x):
        fork_token = torchair.ops.record()
        with torchair.scope.npu_stream_switch("inner", 0):
            torchair.ops.wait([fork_token])
            doubled = self.inner(x)
        own = x + 1
        return own + doubled

    def forward(self, x):
        fork_token = torchair.ops.record()
        with torchair.scope.npu_stream_switch("outer", 0):
            torchair.ops.wait([fork_token])
            result = self.outer(x)
        return result - 1
