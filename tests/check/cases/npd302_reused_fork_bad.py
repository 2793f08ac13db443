"""NPD302: the compressor reuses the fork record of the KV branch (nothing it reads changed since), so it may
start while the KV branch runs, although the caller joins the KV branch before the compressor's statement."""

import torch
from torch import nn

from npudsl import core_limit, on_stream


class Attention(nn.Module):
    @on_stream("mla_stream")
    @core_limit(12, 24)
    def kv_norm_rope(self, kv):
        return kv * 2

    @core_limit(8, 16)
    def q_norm_rope(self, q):
        return q + 1

    @on_stream("compressor_stream")
    @core_limit(16, 32)  # E: NPD302@6
    def compress(self, x):
        return x - 1

    def forward(self, x):
        h = torch.relu(x)
        kv = self.kv_norm_rope(h)
        z = torch.sin(x)
        y = kv + 1
        c = self.compress(h)
        w = self.q_norm_rope(z)
        return y + c + w
