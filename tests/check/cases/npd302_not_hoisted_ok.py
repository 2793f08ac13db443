"""NPD302 reads the schedule the transform writes: the rope reads the query's result, so it stays below the
query's norm and rope and forks after them; their limits never run at once (32 cube cores, but apart)."""

import torch
from torch import nn

from npudsl import core_limit, on_stream


class Attention(nn.Module):
    @on_stream("mla_stream")
    def kv_norm(self, kv):
        return kv * 2

    @core_limit(16, 32)
    def q_norm_rope(self, q):
        return q + 1

    @on_stream("mla_stream")
    @core_limit(16, 32)
    def kv_rope(self, x, w):
        return x - w

    def forward(self, x):
        h = torch.relu(x)
        kv = self.kv_norm(h)
        z = torch.sin(x)
        w = self.q_norm_rope(z)
        c = self.kv_rope(h, w)
        y = w * 3
        return kv + c + y
