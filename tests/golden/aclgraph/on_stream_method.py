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


class Block(nn.Module):
    def branch(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            _record_tagged_stream(x, "side")
            y = torch.relu(x)
            out = y * 2
            _record_tagged_stream(out, "default")
            return out
