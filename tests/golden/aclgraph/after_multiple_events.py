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
_LEFT_DONE = torchair.ops.npu_create_tagged_event(tag="after_multiple_events.Fan.left_done")
_RIGHT_DONE = torchair.ops.npu_create_tagged_event(tag="after_multiple_events.Fan.right_done")
_BOTH_READ = torchair.ops.npu_create_tagged_event(tag="after_multiple_events.Fan.both_read")
_MERGED = torchair.ops.npu_create_tagged_event(tag="after_multiple_events.Fan.merged")


class Fan(nn.Module):
    def left(self, x):
        with torchair.scope.npu_stream_switch("a", 0):
            _record_tagged_stream(x, "a")
            out = x * 2
            _record_tagged_stream(out, "default")
            torchair.ops.npu_tagged_event_record(_LEFT_DONE)
            return out

    def right(self, x):
        with torchair.scope.npu_stream_switch("b", 0):
            _record_tagged_stream(x, "b")
            out = x * 3
            _record_tagged_stream(out, "default")
            torchair.ops.npu_tagged_event_record(_RIGHT_DONE)
            return out

    def merge(self, left, right):
        torchair.ops.npu_tagged_event_wait(_LEFT_DONE)
        torchair.ops.npu_tagged_event_wait(_RIGHT_DONE)
        out = left + right
        torchair.ops.npu_tagged_event_record(_BOTH_READ)
        torchair.ops.npu_tagged_event_record(_MERGED)
        return out
