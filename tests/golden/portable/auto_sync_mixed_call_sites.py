"""One call site uses the result at once, so no call site can wait later: the callee joins itself."""

import torch
from npudsl import runtime
from torch import nn


class Mixed(nn.Module):
    def side(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        runtime.record("auto_sync_mixed_call_sites.Mixed.side.fork")
        with runtime.stream("side", 0):
            runtime.wait("auto_sync_mixed_call_sites.Mixed.side.fork")
            if join:
                runtime.record_stream(x, "side")
            out = x.exp()
            if join:
                runtime.record_stream(out, caller_stream)
            runtime.record("auto_sync_mixed_call_sites.Mixed.side.join")
        if join:
            runtime.wait("auto_sync_mixed_call_sites.Mixed.side.join")
        return out

    def bound(self, x):
        s = self.side(x)
        return s + 1

    def unpacked(self, x):
        first, second = self.side(x).chunk(2)
        return first + second
