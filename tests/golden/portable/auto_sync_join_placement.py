import torch
from npudsl import runtime
from torch import nn


class Overlap(nn.Module):
    def side(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        runtime.record("auto_sync_join_placement.Overlap.side.fork")
        with runtime.stream("side", 0):
            runtime.wait("auto_sync_join_placement.Overlap.side.fork")
            if join:
                runtime.record_stream(x, "side")
            out = x.exp()
            if join:
                runtime.record_stream(out, caller_stream)
            runtime.record("auto_sync_join_placement.Overlap.side.join")
        if join:
            runtime.wait("auto_sync_join_placement.Overlap.side.join")
        return out

    def forward(self, x, flag: bool):
        runtime.record_stream(x, "side")
        s = self.side(x, join=False)
        a = x * 2
        b = a + 1
        if flag:
            runtime.wait("auto_sync_join_placement.Overlap.side.join")
            runtime.record_stream(s, runtime.current_stream())
            b = b + s
        runtime.wait("auto_sync_join_placement.Overlap.side.join")
        runtime.record_stream(s, runtime.current_stream())
        return b

    def discarded(self, x):
        self.side(x)
        return x + 1
