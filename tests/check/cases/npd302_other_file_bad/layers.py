"""NPD302: the compressor is called only from another file of the run, which may fork it while ``prolog``'s
KV branch is pending; this file checked alone reports the pair too (it cannot see that caller)."""

from torch import nn

from npudsl import core_limit, on_stream


class Pair(nn.Module):
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

    def prolog(self, x):
        kv = self.kv_norm_rope(x)
        q = self.q_norm_rope(x)
        return q + kv
