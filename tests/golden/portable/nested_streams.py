import torch
from torch import nn
from npudsl import runtime


class Nested(nn.Module):
    def inner(self, x):
        runtime.record("nested_streams.Nested.inner.fork")
        with runtime.stream("inner", 0):
            runtime.wait("nested_streams.Nested.inner.fork")
            runtime.record_stream(x, "inner")
            out = x * 2
            runtime.record("nested_streams.Nested.inner.join")
            return out

    def outer(self, x):
        runtime.record("nested_streams.Nested.outer.fork")
        with runtime.stream("outer", 0):
            runtime.wait("nested_streams.Nested.outer.fork")
            runtime.record_stream(x, "outer")
            doubled = self.inner(x)
            own = x + 1
            runtime.wait("nested_streams.Nested.inner.join")
            out = own + doubled
            runtime.record("nested_streams.Nested.outer.join")
            return out

    def forward(self, x):
        result = self.outer(x)
        runtime.wait("nested_streams.Nested.outer.join")
        return result - 1
