import torch
from torch import nn
import torchair

# Tagged events are process-global: each is created once, here.
_SIDE_FORK = torchair.ops.npu_create_tagged_event(tag="auto_sync_join_placement.Overlap.side.fork")
_SIDE_JOIN = torchair.ops.npu_create_tagged_event(tag="auto_sync_join_placement.Overlap.side.join")


class Overlap(nn.Module):
    def side(self, x):
        torchair.ops.npu_tagged_event_record(_SIDE_FORK)
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.ops.npu_tagged_event_wait(_SIDE_FORK)
            torchair.ops.npu_record_tagged_stream(x, "side")
            out = x.exp()
            torchair.ops.npu_tagged_event_record(_SIDE_JOIN)
            return out

    def forward(self, x, flag: bool):
        s = self.side(x)
        a = x * 2
        b = a + 1
        torchair.ops.npu_tagged_event_wait(_SIDE_JOIN)
        if flag:
            b = b + s
        return b

    def discarded(self, x):
        self.side(x)
        torchair.ops.npu_tagged_event_wait(_SIDE_JOIN)
        return x + 1
