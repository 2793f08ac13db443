import torch
from torch import nn
import torchair

# Tagged events are process-global: each is created once, here.
_SIMPLE_FORK = torchair.ops.npu_create_tagged_event(tag="auto_sync_no_call_site.Lonely.simple.fork")
_SIMPLE_JOIN = torchair.ops.npu_create_tagged_event(tag="auto_sync_no_call_site.Lonely.simple.join")
_BRANCHING_FORK = torchair.ops.npu_create_tagged_event(tag="auto_sync_no_call_site.Lonely.branching.fork")
_BRANCHING_JOIN = torchair.ops.npu_create_tagged_event(tag="auto_sync_no_call_site.Lonely.branching.join")


class Lonely(nn.Module):
    def simple(self, x):
        torchair.ops.npu_tagged_event_record(_SIMPLE_FORK)
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.ops.npu_tagged_event_wait(_SIMPLE_FORK)
            torchair.ops.npu_record_tagged_stream(x, "side")
            y = x + 1
            out = y * 2
            torchair.ops.npu_tagged_event_record(_SIMPLE_JOIN)
        torchair.ops.npu_tagged_event_wait(_SIMPLE_JOIN)
        return out

    def branching(self, x):
        torchair.ops.npu_tagged_event_record(_BRANCHING_FORK)
        try:
            with torchair.scope.npu_stream_switch("side", 0):
                torchair.ops.npu_tagged_event_wait(_BRANCHING_FORK)
                torchair.ops.npu_record_tagged_stream(x, "side")
                if x.sum() > 0:
                    torchair.ops.npu_tagged_event_record(_BRANCHING_JOIN)
                    return x
                out = -x
                torchair.ops.npu_tagged_event_record(_BRANCHING_JOIN)
                return out
        finally:
            torchair.ops.npu_tagged_event_wait(_BRANCHING_JOIN)
