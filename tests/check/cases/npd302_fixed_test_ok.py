"""NPD302 reads the schedule the module is transformed with: a test bound once reads one value at every ``if``.

vllm-ascend's context-parallel attention forks its query gather under ``if has_chunked_context:`` and joins it
under a later ``if has_chunked_context:``; the compressor forks after that. No run reaches the compressor with the
gather pending (both tests read one value: ``fixed_tests.py``), so 12/24 and 16/32, 28 cube cores in all, never
run at once.
"""

from torch import nn

from npudsl import core_limit, on_stream


class Attention(nn.Module):
    @on_stream("comm_stream")
    @core_limit(12, 24)
    def gather(self, q):
        return q * 2

    @core_limit(8, 16)
    def project(self, x):
        return x * 3

    @on_stream("compressor_stream")
    @core_limit(16, 32)
    def compress(self, x, cache):
        cache.copy_(x)

    def forward(self, x, meta, cache):
        has_context = meta is not None
        if has_context:
            q_all = self.gather(x)
        y = self.project(x)
        if has_context:
            y = y + q_all
        z = y * 5
        self.compress(z, cache)
        w = z - 1
        return w + cache
