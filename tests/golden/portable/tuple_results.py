import torch
from npudsl import runtime
from torch import nn


class Split(nn.Module):
    def halves(self, x):
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            left, right = x.chunk(2)
            out = right.relu()
            out_1 = (left * 2)
            runtime.record_stream(left, caller_stream)
            runtime.record_stream(out, caller_stream)
            runtime.record_stream(out_1, caller_stream)
            return left, out, out_1

    def packed(self, x):
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0):
            runtime.record_stream(x, "side")
            out = torch.split(x, 2)
            runtime.record_stream(out, caller_stream)
            return out
