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
_SIDE_FORK = torchair.ops.npu_create_tagged_event(tag="auto_sync_used_at_once.AtOnce.side.fork")
_SIDE_JOIN = torchair.ops.npu_create_tagged_event(tag="auto_sync_used_at_once.AtOnce.side.join")


class AtOnce(nn.Module):
    def side(self, x, *, join=True):
        torchair.ops.npu_tagged_event_record(_SIDE_FORK)
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.ops.npu_tagged_event_wait(_SIDE_FORK)
            if join:
                _record_tagged_stream(x, "side")
            out = x.cos()
            if join:
                _record_tagged_stream(out, "default")
            torchair.ops.npu_tagged_event_record(_SIDE_JOIN)
        if join:
            torchair.ops.npu_tagged_event_wait(_SIDE_JOIN)
        return out

    def forward(self, x):
        return self.side(x) + x
