import torch
from npudsl import runtime
from torch import nn


class Looped(nn.Module):
    def side(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        runtime.record("auto_sync_loop.Looped.side.fork")
        with runtime.stream("side", 0):
            runtime.wait("auto_sync_loop.Looped.side.fork")
            if join:
                runtime.record_stream(x, "side")
            out = x.sin()
            if join:
                runtime.record_stream(out, caller_stream)
            runtime.record("auto_sync_loop.Looped.side.join")
        if join:
            runtime.wait("auto_sync_loop.Looped.side.join")
        return out

    def forward(self, x):
        side_forked = False
        acc = torch.zeros_like(x)
        for step in range(3):
            runtime.record_stream(x, "side")
            s = self.side(x, join=False)
            side_forked = True
            x = x + step
        if side_forked:
            runtime.wait("auto_sync_loop.Looped.side.join")
            runtime.record_stream(s, runtime.current_stream())
        return acc + x
