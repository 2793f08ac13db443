import torch
import torchair
from torch import nn

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for


class Pipeline(nn.Module):
    def produce(self, x):
        out = x + 1
        _EVENT_TOKENS["after_records.Pipeline.ready"] = torchair.ops.record()
        return out

    def consume(self, y):
        if "after_records.Pipeline.ready" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("after_records.Pipeline.ready")])
        return y.sum()
