import torch
from npudsl import runtime
from torch import nn


class Pipeline(nn.Module):
    def produce(self, x):
        out = x + 1
        runtime.record("after_records.Pipeline.ready")
        return out

    def consume(self, y):
        caller_stream = runtime.current_stream()
        with runtime.stream("consumer", 0):
            runtime.record_stream(y, "consumer")
            runtime.wait("after_records.Pipeline.ready")
            out = y.sum()
            runtime.record_stream(out, caller_stream)
            return out
