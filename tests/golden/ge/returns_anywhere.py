import torch
import torchair
from torch import nn

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> the token its last record made (torchair.ops.record)


class Early(nn.Module):
    def route(self, x, skip):
        with torchair.scope.npu_stream_switch("side", 0):
            if skip:
                _EVENT_TOKENS["returns_anywhere.Early.finished"] = torchair.ops.record()
                return x
            for _ in range(2):
                if x.sum() > 0:
                    out = x * 2
                    _EVENT_TOKENS["returns_anywhere.Early.finished"] = torchair.ops.record()
                    return out

            def helper(v):
                return v + 1  # a nested function's return is its own

            x = helper(x)
            out_1 = torch.relu(x)
            _EVENT_TOKENS["returns_anywhere.Early.finished"] = torchair.ops.record()
            return out_1

    def log(self, x):
        print(x.shape)
        _EVENT_TOKENS["returns_anywhere.Early.logged"] = torchair.ops.record()
