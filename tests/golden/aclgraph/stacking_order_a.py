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
_GO = torchair.ops.npu_create_tagged_event(tag="stacking_order_a.Ordered.go")
_DONE = torchair.ops.npu_create_tagged_event(tag="stacking_order_a.Ordered.done")


class Ordered(nn.Module):
    def start(self, x):
        out = x + 1
        torchair.ops.npu_tagged_event_record(_GO)
        return out

    def work(self, x):
        with (
            torchair.scope.npu_stream_switch("s", 0),
            torchair.scope.limit_core_num(4, 8),
        ):
            _record_tagged_stream(x, "s")
            torchair.ops.npu_tagged_event_wait(_GO)
            out = x * 2
            _record_tagged_stream(out, "default")
            torchair.ops.npu_tagged_event_record(_DONE)
            return out

    def finish(self, y):
        torchair.ops.npu_tagged_event_wait(_DONE)
        return y - 1
