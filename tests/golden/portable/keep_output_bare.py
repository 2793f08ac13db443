import torch
from npudsl import runtime
from torch import nn


class Producer(nn.Module):
    def pair(self, x):
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            a = x + 1
            out = x * 2
            runtime.record_stream(a, caller_stream)
            runtime.record_stream(out, caller_stream)
            return a, out
