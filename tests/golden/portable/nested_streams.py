import torch
from npudsl import runtime
from torch import nn


class Nested(nn.Module):
    def inner(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        runtime.record("nested_streams.Nested.inner.fork")
        with runtime.stream("inner", 0):
            runtime.wait("nested_streams.Nested.inner.fork")
            if join:
                runtime.record_stream(x, "inner")
            out = x * 2
            if join:
                runtime.record_stream(out, caller_stream)
            runtime.record("nested_streams.Nested.inner.join")
        if join:
            runtime.wait("nested_streams.Nested.inner.join")
        return out

    def outer(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        runtime.record("nested_streams.Nested.outer.fork")
        with runtime.stream("outer", 0):
            runtime.wait("nested_streams.Nested.outer.fork")
            if join:
                runtime.record_stream(x, "outer")
            runtime.record_stream(x, "inner")
            doubled = self.inner(x, join=False)
            own = x + 1
            runtime.wait("nested_streams.Nested.inner.join")
            runtime.record_stream(doubled, runtime.current_stream())
            out = own + doubled
            if join:
                runtime.record_stream(out, caller_stream)
            runtime.record("nested_streams.Nested.outer.join")
        if join:
            runtime.wait("nested_streams.Nested.outer.join")
        return out

    def forward(self, x):
        result = self.outer(x)
        return result - 1
