"""NPD302: the rope is issued in the KV norm's block on "mla_stream", above the query's norm and rope on the main
stream (nothing there touches what it reads), so the two limits run at once: 32 cube cores on a 24-core device."""

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
    @core_limit(16, 32)  # E: NPD302@6
    def kv_rope(self, x):
        return x - 1

    def forward(self, x):
        h = torch.relu(x)
        kv = self.kv_norm(h)
        z = torch.sin(x)
        w = self.q_norm_rope(z)
        c = self.kv_rope(h)
        y = w * 3
        return kv + c + y
