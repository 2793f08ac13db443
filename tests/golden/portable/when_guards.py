from contextlib import nullcontext

import torch
from npudsl import runtime
from torch import nn

import config


class Guarded(nn.Module):
    def __init__(self, multistream=True):
        super().__init__()
        self.multistream = multistream

    def side(self, x):
        with runtime.core_limit(8, 16) if config.LIMIT_CORES else nullcontext():
            return x * 2

    def produce(self, x):
        out = x * 3
        if self.multistream:
            runtime.record("when_guards.Guarded.ready")
        return out

    def consume(self, x):
        if self.multistream:
            runtime.wait("when_guards.Guarded.ready")
        return x + 1

    def forward(self, x):
        if self.multistream:
            runtime.record("when_guards.Guarded.side.fork")
        with runtime.stream("side", 0) if self.multistream else nullcontext():
            if self.multistream:
                runtime.wait("when_guards.Guarded.side.fork")
                runtime.record_stream(x, "side")
            y = self.side(x)
            if self.multistream:
                runtime.record("when_guards.Guarded.side.join")
        z = x - 1
        if self.multistream:
            runtime.wait("when_guards.Guarded.side.join")
        return y + z
