import torch
from npudsl import runtime
from torch import nn


class Looped(nn.Module):
    def side(self, x):
        return x.sin()

    def forward(self, x):
        side_forked = False
        acc = torch.zeros_like(x)
        for step in range(3):
            runtime.record("auto_sync_loop.Looped.side.fork")
            with runtime.stream("side", 0):
                runtime.wait("auto_sync_loop.Looped.side.fork")
                runtime.record_stream(x, "side")
                s = self.side(x)
                runtime.record("auto_sync_loop.Looped.side.join")
            side_forked = True
            x = x + step
        if side_forked:
            runtime.wait("auto_sync_loop.Looped.side.join")
        return acc + x
