"""One call site uses the result at once, so no call site can wait later: the callee joins itself."""

import torch
from torch import nn


class Mixed(nn.Module):
    def side(self, x):
        return x.exp()

    def bound(self, x):
        s = self.side(x)
        return s + 1

    def unpacked(self, x):
        first, second = self.side(x).chunk(2)
        return first + second
