import torch
from npudsl import runtime
from torch import nn


class Flexible(nn.Module):
    def run(self, *args, scale=1.0, **kwargs):
        caller_stream = runtime.current_stream()
        with runtime.stream("side", 0), runtime.core_limit(4, 8):
            runtime.record_stream(args, "side")
            runtime.record_stream(kwargs, "side")
            total = sum(args)
            out = total * scale + kwargs.get("bias", 0)
            runtime.record_stream(out, caller_stream)
            return out
