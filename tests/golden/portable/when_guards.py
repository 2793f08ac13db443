import torch
from torch import nn

import config
from npudsl import runtime
from contextlib import nullcontext


class Guarded(nn.Module):
    def __init__(self, multistream=True):
        super().__init__()
        self.multistream = multistream

    def side(self, x):
        if self.multistream:
            runtime.record("when_guards.Guarded.side.fork")
        with (
            runtime.stream("side", 0) if self.multistream else nullcontext(),
            runtime.core_limit(8, 16) if config.LIMIT_CORES else nullcontext(),
        ):
            if self.multistream:
                runtime.wait("when_guards.Guarded.side.fork")
                runtime.record_stream(x, "side")
            out = x * 2
            if self.multistream:
                runtime.record_stream(out, "default")
                runtime.record("when_guards.Guarded.side.join")
            return out

    def produce(self, x):
        with runtime.stream("producer", 0) if self.multistream else nullcontext():
            out = x * 3
            if self.multistream:
                runtime.record("when_guards.Guarded.ready")
            return out

    def consume(self, x):
        if self.multistream:
            runtime.wait("when_guards.Guarded.ready")
        return x + 1

    def forward(self, x):
        y = self.side(x)
        z = x - 1
        if self.multistream:
            runtime.wait("when_guards.Guarded.side.join")
        return y + z
