"""NPD302 reads the schedule: limits whose calls never run at once may add up to more than the device.

DeepSeek-V4's decode attention in cann-recipes-infer: the KV branch at 12/24 on "mla_stream" is joined before
``prolog`` returns, and the compressor at 16/32 on "compressor_stream" is forked later, in ``sparse``; 28 cube
cores in all, but never at once. In ``both``, the compressor reads what the join of the KV branch made, so
it forks after that join: apart too.
"""

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
    @core_limit(16, 32)
    def compress(self, x, cache):
        cache.copy_(x)

    def prolog(self, x, win):
        kv = self.kv_norm_rope(x)
        q = self.q_norm_rope(x)
        win.copy_(kv)
        return q

    def sparse(self, x, q, cache):
        self.compress(x, cache)
        y = q * 3
        return y + cache

    def both(self, x, cache):
        kv = self.kv_norm_rope(x)
        h = kv + 1
        self.compress(h, cache)
        y = x * 3
        return y + cache

    def forward(self, x, win, cache):
        q = self.prolog(x, win)
        o = self.sparse(x, q, cache)
        return o + self.both(x, cache)
