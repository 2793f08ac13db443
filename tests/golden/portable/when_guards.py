from contextlib import nullcontext

import torch
from npudsl import runtime
from torch import nn

import config


class Guarded(nn.Module):
    def __init__(self, multistream=True):
        super().__init__()
        self.multistream = multistream

    def side(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        if self.multistream:
            runtime.record("when_guards.Guarded.side.fork")
        with (
            runtime.stream("side", 0) if self.multistream else nullcontext(),
            runtime.core_limit(8, 16) if config.LIMIT_CORES else nullcontext(),
        ):
            if self.multistream:
                runtime.wait("when_guards.Guarded.side.fork")
                if join:
                    runtime.record_stream(x, "side")
            out = x * 2
            if self.multistream:
                if join:
                    runtime.record_stream(out, caller_stream)
                runtime.record("when_guards.Guarded.side.join")
        if self.multistream and join:
            runtime.wait("when_guards.Guarded.side.join")
        return out

    def produce(self, x):
        caller_stream = runtime.current_stream()
        with runtime.stream("producer", 0) if self.multistream else nullcontext():
            if self.multistream:
                runtime.record_stream(x, "producer")
            out = x * 3
            if self.multistream:
                runtime.record_stream(out, caller_stream)
                runtime.record("when_guards.Guarded.ready")
            return out

    def consume(self, x):
        if self.multistream:
            runtime.wait("when_guards.Guarded.ready")
        return x + 1

    def forward(self, x):
        if self.multistream:
            runtime.record_stream(x, "side")
        y = self.side(x, join=False)
        z = x - 1
        if self.multistream:
            runtime.wait("when_guards.Guarded.side.join")
            runtime.record_stream(y, runtime.current_stream())
        return y + z
