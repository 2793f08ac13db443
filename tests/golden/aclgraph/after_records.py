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
_READY = torchair.ops.npu_create_tagged_event(tag="after_records.Pipeline.ready")


class Pipeline(nn.Module):
    def produce(self, x):
        out = x + 1
        torchair.ops.npu_tagged_event_record(_READY)
        return out

    def consume(self, y):
        with torchair.scope.npu_stream_switch("consumer", 0):
            _record_tagged_stream(y, "consumer")
            torchair.ops.npu_tagged_event_wait(_READY)
            out = y.sum()
            _record_tagged_stream(out, "default")
            return out
