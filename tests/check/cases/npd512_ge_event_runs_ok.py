"""NPD512 holds nothing back when each wait follows its record in the same run (and loops record too)."""
# target: ge

import torch
from torch import nn

from npudsl import after, on_stream, records


class Layer(nn.Module):
    @records("kv_written")
    def write_kv(self, x):
        return x * 2

    @on_stream("prefetch", sync="manual")
    @after("kv_written")
    def prefetch(self, x):
        return x + 1

    def forward(self, x):
        kv = self.write_kv(x)
        first = self.prefetch(kv)
        outs = []
        for chunk in x.chunk(2):
            self.write_kv(chunk)
            outs.append(self.prefetch(chunk))
        return first + torch.cat(outs)
