import torch
from torch import nn
from npudsl import runtime


class Looped(nn.Module):
    def side(self, x):
        runtime.record("auto_sync_loop.Looped.side.fork")
        with runtime.stream("side", 0):
            runtime.wait("auto_sync_loop.Looped.side.fork")
            runtime.record_stream(x, "side")
            out = x.sin()
            runtime.record("auto_sync_loop.Looped.side.join")
            return out

    def forward(self, x):
        acc = torch.zeros_like(x)
        for step in range(3):
            s = self.side(x)
            x = x + step
            runtime.wait("auto_sync_loop.Looped.side.join")
        return acc + x
