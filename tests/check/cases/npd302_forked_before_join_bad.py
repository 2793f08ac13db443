"""NPD302: the compressor is forked while the KV branch is still pending, so 12 + 16 cube cores run at once."""

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
    def compress(self, x, cache):
        cache.copy_(x)

    def forward(self, x, win, cache):
        kv = self.kv_norm_rope(x)
        self.compress(x, cache)
        q = self.q_norm_rope(x)
        win.copy_(kv)
        return q + cache
