import torch
from npudsl import runtime
from torch import nn


class Short(nn.Module):
    def documented(self, x):
        """The docstring stays first."""
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            out = x + 1
            runtime.record_stream(out, caller_stream)
            return out

    def one_liner(self, x):
        with runtime.core_limit(2, 4):
            return x - 1
