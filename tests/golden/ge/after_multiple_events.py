import torch
import torchair
from torch import nn

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for


class Fan(nn.Module):
    def left(self, x):
        out = x * 2
        _EVENT_TOKENS["after_multiple_events.Fan.left_done"] = torchair.ops.record()
        return out

    def right(self, x):
        out = x * 3
        _EVENT_TOKENS["after_multiple_events.Fan.right_done"] = torchair.ops.record()
        return out

    def merge(self, left, right):
        if "after_multiple_events.Fan.left_done" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("after_multiple_events.Fan.left_done")])
        if "after_multiple_events.Fan.right_done" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("after_multiple_events.Fan.right_done")])
        return left + right
