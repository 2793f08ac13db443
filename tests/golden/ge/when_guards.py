from contextlib import nullcontext

import torch
import torchair
from torch import nn

import config

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for


class Guarded(nn.Module):
    def __init__(self, multistream=True):
        super().__init__()
        self.multistream = multistream

    def side(self, x):
        with torchair.scope.limit_core_num(8, 16) if config.LIMIT_CORES else nullcontext():
            return x * 2

    def produce(self, x):
        out = x * 3
        if self.multistream:
            _EVENT_TOKENS["when_guards.Guarded.ready"] = torchair.ops.record()
        return out

    def consume(self, x):
        if self.multistream:
            if "when_guards.Guarded.ready" in _EVENT_TOKENS:
                torchair.ops.wait([_EVENT_TOKENS.pop("when_guards.Guarded.ready")])
        return x + 1

    def forward(self, x):
        with torchair.scope.npu_stream_switch("side", 0) if self.multistream else nullcontext():
            y = self.side(x)
        z = x - 1
        return y + z
