"""Values the second call on a side stream reads that could not move before the first call: no NPD515."""

import torch
from torch import nn

from npudsl import on_stream


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.randn(16, 4)

    @on_stream("side")
    def project(self, x):
        return x * 2

    @on_stream("side")
    def rotate(self, kv, cos, sin):
        return kv * cos + sin

    def hoisted(self, x, positions):
        cos, sin = self.table[positions], self.table[positions + 1]
        kv = self.project(x)
        out = self.rotate(kv, cos, sin)
        y = x.relu()
        return out + y

    def reads_the_first_result(self, x, positions):
        kv = self.project(x)
        cos = kv.sum() + self.table[positions]
        out = self.rotate(kv, cos, cos)
        y = x.relu()
        return out + y

    def rebinds_the_first_input(self, x, positions):
        kv = self.project(x)
        x = self.table[positions]
        out = self.rotate(kv, x, x)
        y = x.relu()
        return out + y

    def written_in_place_between(self, x, positions):
        kv = self.project(x)
        cos = self.table[positions]
        x.add_(1)
        out = self.rotate(kv, cos, x)
        y = x.relu()
        return out + y

    def augmented(self, x, positions):
        kv = self.project(x)
        cos = self.table[positions]
        cos += 1
        out = self.rotate(kv, cos, cos)
        y = x.relu()
        return out + y
