import torch
from torch import nn
import torchair

# Tagged events are process-global: each is created once, here.
_INNER_FORK = torchair.ops.npu_create_tagged_event(tag="nested_streams.Nested.inner.fork")
_INNER_JOIN = torchair.ops.npu_create_tagged_event(tag="nested_streams.Nested.inner.join")
_OUTER_FORK = torchair.ops.npu_create_tagged_event(tag="nested_streams.Nested.outer.fork")
_OUTER_JOIN = torchair.ops.npu_create_tagged_event(tag="nested_streams.Nested.outer.join")


class Nested(nn.Module):
    def inner(self, x):
        torchair.ops.npu_tagged_event_record(_INNER_FORK)
        with torchair.scope.npu_stream_switch("inner", 0):
            torchair.ops.npu_tagged_event_wait(_INNER_FORK)
            torchair.ops.npu_record_tagged_stream(x, "inner")
            out = x * 2
            torchair.ops.npu_tagged_event_record(_INNER_JOIN)
            return out

    def outer(self, x):
        torchair.ops.npu_tagged_event_record(_OUTER_FORK)
        with torchair.scope.npu_stream_switch("outer", 0):
            torchair.ops.npu_tagged_event_wait(_OUTER_FORK)
            torchair.ops.npu_record_tagged_stream(x, "outer")
            doubled = self.inner(x)
            own = x + 1
            torchair.ops.npu_tagged_event_wait(_INNER_JOIN)
            out = own + doubled
            torchair.ops.npu_tagged_event_record(_OUTER_JOIN)
            return out

    def forward(self, x):
        result = self.outer(x)
        torchair.ops.npu_tagged_event_wait(_OUTER_JOIN)
        return result - 1
