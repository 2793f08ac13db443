import torch
import torchair
from torch import nn


def _record_tagged_stream(value, stream) -> None:
    """``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        torchair.ops.npu_record_tagged_stream(value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_tagged_stream(item, stream)
    elif isinstance(value, dict):
        for item in value.values():
            _record_tagged_stream(item, stream)


# Tagged events are process-global: each is created once, here.
_INNER_FORK = torchair.ops.npu_create_tagged_event(tag="nested_streams.Nested.inner.fork")
_INNER_JOIN = torchair.ops.npu_create_tagged_event(tag="nested_streams.Nested.inner.join")
_OUTER_FORK = torchair.ops.npu_create_tagged_event(tag="nested_streams.Nested.outer.fork")
_OUTER_JOIN = torchair.ops.npu_create_tagged_event(tag="nested_streams.Nested.outer.join")


class Nested(nn.Module):
    def inner(self, x, *, join=True):
        torchair.ops.npu_tagged_event_record(_INNER_FORK)
        with torchair.scope.npu_stream_switch("inner", 0):
            torchair.ops.npu_tagged_event_wait(_INNER_FORK)
            if join:
                _record_tagged_stream(x, "inner")
            out = x * 2
            if join:
                _record_tagged_stream(out, "default")
            torchair.ops.npu_tagged_event_record(_INNER_JOIN)
        if join:
            torchair.ops.npu_tagged_event_wait(_INNER_JOIN)
        return out

    def outer(self, x, *, join=True):
        torchair.ops.npu_tagged_event_record(_OUTER_FORK)
        with torchair.scope.npu_stream_switch("outer", 0):
            torchair.ops.npu_tagged_event_wait(_OUTER_FORK)
            if join:
                _record_tagged_stream(x, "outer")
            _record_tagged_stream(x, "inner")
            doubled = self.inner(x, join=False)
            own = x + 1
            torchair.ops.npu_tagged_event_wait(_INNER_JOIN)
            _record_tagged_stream(doubled, "outer")
            out = own + doubled
            if join:
                _record_tagged_stream(out, "default")
            torchair.ops.npu_tagged_event_record(_OUTER_JOIN)
        if join:
            torchair.ops.npu_tagged_event_wait(_OUTER_JOIN)
        return out

    def forward(self, x):
        result = self.outer(x)
        return result - 1
