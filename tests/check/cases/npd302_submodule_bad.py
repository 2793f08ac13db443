"""NPD302: the layer's attention (a submodule of this module) forks its KV branch while the layer's
compressor is pending, so the two limits of different classes run at once."""

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

    def forward(self, x):
        kv = self.kv_norm_rope(x)
        q = self.q_norm_rope(x)
        return q + kv


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()

    @on_stream("compressor_stream")
    @core_limit(16, 32)  # E: NPD302@6
    def compress(self, x):
        return x - 1

    def forward(self, x):
        c = self.compress(x)
        a = self.attn(x)
        return a + c
