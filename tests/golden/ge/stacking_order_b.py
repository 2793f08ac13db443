import torch
import torchair
from torch import nn

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for


class Ordered(nn.Module):
    def start(self, x):
        out = x + 1
        _EVENT_TOKENS["stacking_order_b.Ordered.go"] = torchair.ops.record()
        return out

    def work(self, x):
        with torchair.scope.limit_core_num(4, 8):
            if "stacking_order_b.Ordered.go" in _EVENT_TOKENS:
                torchair.ops.wait([_EVENT_TOKENS.pop("stacking_order_b.Ordered.go")])
            out = x * 2
            _EVENT_TOKENS["stacking_order_b.Ordered.done"] = torchair.ops.record()
            return out

    def finish(self, y):
        if "stacking_order_b.Ordered.done" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("stacking_order_b.Ordered.done")])
        return y - 1
