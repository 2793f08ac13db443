import torch
from npudsl import runtime
from torch import nn


class Overlap(nn.Module):
    def side(self, x):
        return x.exp()

    def forward(self, x, flag: bool):
        runtime.record("auto_sync_join_placement.Overlap.side.fork")
        with runtime.stream("side", 0):
            runtime.wait("auto_sync_join_placement.Overlap.side.fork")
            runtime.record_stream(x, "side")
            s = self.side(x)
            runtime.record("auto_sync_join_placement.Overlap.side.join")
        a = x * 2
        b = a + 1
        runtime.wait("auto_sync_join_placement.Overlap.side.join")
        if flag:
            b = b + s
        return b

    def discarded(self, x):
        self.side(x)
        return x + 1
