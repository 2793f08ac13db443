import torch
from torch import nn

import config
from npudsl import after, core_limit, keep_output, on_stream, records


class Guarded(nn.Module):
    def __init__(self, multistream=True):
        super().__init__()
        self.multistream = multistream

    @on_stream("side", when="self.multistream")
    @core_limit(8, 16, when="config.LIMIT_CORES")
    @keep_output(when="self.multistream")
    def side(self, x):
        return x * 2

    @on_stream("producer", sync="manual", when="self.multistream")
    @records("ready", when="self.multistream")
    def produce(self, x):
        return x * 3

    @after("ready", when="self.multistream")
    def consume(self, x):
        return x + 1

    def forward(self, x):
        y = self.side(x)
        z = x - 1
        return y + z
