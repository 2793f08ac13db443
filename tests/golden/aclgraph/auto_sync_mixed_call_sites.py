"""One call site uses the result at once, so no call site can wait later: the callee joins itself."""

import torch
from torch import nn
import torchair

# Tagged events are process-global: each is created once, here.
_SIDE_FORK = torchair.ops.npu_create_tagged_event(tag="auto_sync_mixed_call_sites.Mixed.side.fork")
_SIDE_JOIN = torchair.ops.npu_create_tagged_event(tag="auto_sync_mixed_call_sites.Mixed.side.join")


class Mixed(nn.Module):
    def side(self, x):
        torchair.ops.npu_tagged_event_record(_SIDE_FORK)
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.ops.npu_tagged_event_wait(_SIDE_FORK)
            torchair.ops.npu_record_tagged_stream(x, "side")
            out = x.exp()
            torchair.ops.npu_tagged_event_record(_SIDE_JOIN)
        torchair.ops.npu_tagged_event_wait(_SIDE_JOIN)
        return out

    def bound(self, x):
        s = self.side(x)
        return s + 1

    def unpacked(self, x):
        first, second = self.side(x).chunk(2)
        return first + second
