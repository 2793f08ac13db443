"""NPD512: with --target ge, an event order that would cross a run of the graph."""
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
        early = self.prefetch(x)  # W: NPD512@17
        kv = self.write_kv(x)
        parts = [self.prefetch(c) for c in kv.chunk(2)]  # W: NPD512@18
        for chunk in x.chunk(2):
            self.prefetch(chunk)  # W: NPD512@13
        for chunk in x.chunk(2):
            self.write_kv(chunk)
            for piece in chunk.chunk(2):
                self.prefetch(piece)  # W: NPD512@17
        return early + torch.cat(parts)


class Flagged(nn.Module):
    def __init__(self, multistream: bool = True) -> None:
        super().__init__()
        self.multistream = multistream

    @records("ready", when="self.multistream")  # W: NPD512@6
    def produce(self, x):
        return x * 2

    @after("ready")
    def consume(self, x):
        return x + 1

    def forward(self, x):
        y = self.produce(x)
        z = self.consume(y)
        return self.produce(z)  # W: NPD512@16
