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


class Split(nn.Module):
    def halves(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            _record_tagged_stream(x, "side")
            left, right = x.chunk(2)
            out = right.relu()
            out_1 = (left * 2)
            _record_tagged_stream(left, "default")
            _record_tagged_stream(out, "default")
            _record_tagged_stream(out_1, "default")
            return left, out, out_1

    def packed(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            _record_tagged_stream(x, "side")
            out = torch.split(x, 2)
            _record_tagged_stream(out, "default")
            return out
