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
_SIDE_DONE = torchair.ops.npu_create_tagged_event(tag="default_stream.BackToMain.side_done")


class BackToMain(nn.Module):
    def side(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            _record_tagged_stream(x, "side")
            out = x * 2
            _record_tagged_stream(out, "default")
            torchair.ops.npu_tagged_event_record(_SIDE_DONE)
            return out

    def main(self, x):
        torchair.ops.npu_tagged_event_wait(_SIDE_DONE)
        return x + 1
