import torch
import torchair
from torch import nn

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for


class BackToMain(nn.Module):
    def side(self, x):
        out = x * 2
        _EVENT_TOKENS["default_stream.BackToMain.side_done"] = torchair.ops.record()
        return out

    def main(self, x):
        if "default_stream.BackToMain.side_done" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("default_stream.BackToMain.side_done")])
        return x + 1
