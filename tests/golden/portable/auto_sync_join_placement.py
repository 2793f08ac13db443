import torch
from torch import nn
from npudsl import runtime


class Overlap(nn.Module):
    def side(self, x):
        runtime.record("auto_sync_join_placement.Overlap.side.fork")
        with runtime.stream("side", 0):
            runtime.wait("auto_sync_join_placement.Overlap.side.fork")
            runtime.record_stream(x, "side")
            out = x.exp()
            runtime.record("auto_sync_join_placement.Overlap.side.join")
            return out

    def forward(self, x, flag: bool):
        s = self.side(x)
        a = x * 2
        b = a + 1
        runtime.wait("auto_sync_join_placement.Overlap.side.join")
        if flag:
            b = b + s
        return b

    def discarded(self, x):
        self.side(x)
        runtime.wait("auto_sync_join_placement.Overlap.side.join")
        return x + 1
