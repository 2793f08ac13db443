"""NPD302: in a loop, the compressor of one step is still pending when the KV branch of the next is forked."""

from torch import nn

from npudsl import core_limit, on_stream


class Layers(nn.Module):
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

    def forward(self, x, steps: int):
        c = x
        for _ in range(steps):
            kv = self.kv_norm_rope(x)
            h = kv + c
            c = self.compress(h)
            x = self.q_norm_rope(h)
        return x + c
