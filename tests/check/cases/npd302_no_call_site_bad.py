"""NPD302: stream functions with no visible call site may run at any time, so their limits may meet."""

from torch import nn

from npudsl import core_limit, on_stream


class Split(nn.Module):
    @on_stream("mla_stream")  # W: NPD502@6
    @core_limit(12, 24)
    def kv_norm_rope(self, kv):
        return kv * 2

    @core_limit(8, 16)
    def q_norm_rope(self, q):
        return q + 1

    @on_stream("compressor_stream")  # W: NPD502@6
    @core_limit(16, 32)  # E: NPD302@6
    def compress(self, x, cache):
        cache.copy_(x)
