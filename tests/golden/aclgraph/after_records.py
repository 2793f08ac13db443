import torch
from torch import nn
import torchair

# Tagged events are process-global: each is created once, here.
_READY = torchair.ops.npu_create_tagged_event(tag="after_records.Pipeline.ready")


class Pipeline(nn.Module):
    def produce(self, x):
        out = x + 1
        torchair.ops.npu_tagged_event_record(_READY)
        return out

    def consume(self, y):
        with torchair.scope.npu_stream_switch("consumer", 0):
            torchair.ops.npu_tagged_event_wait(_READY)
            return y.sum()
