import torch
from npudsl import runtime
from torch import nn


class Nested(nn.Module):
    def inner(self, x):
        return x * 2

    def outer(self, x):
        runtime.record("nested_streams.Nested.inner.fork")
        with runtime.stream("inner", 0):
            runtime.wait("nested_streams.Nested.inner.fork")
            runtime.record_stream(x, "inner")
            doubled = self.inner(x)
            runtime.record("nested_streams.Nested.inner.join")
        own = x + 1
        runtime.wait("nested_streams.Nested.inner.join")
        return own + doubled

    def forward(self, x):
        result = self.outer(x)
        return result - 1
