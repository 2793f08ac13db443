"""One call site uses the result at once, so no call site can wait later: the callee joins itself."""

import torch
import torchair
from torch import nn


class Mixed(nn.Module):
    def side(self, x):
        return x.exp()

    def bound(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            s = self.side(x)
        return s + 1

    def unpacked(self, x):
        first, second = self.side(x).chunk(2)
        return first + second
