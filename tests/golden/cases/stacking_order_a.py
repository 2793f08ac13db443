import torch
from torch import nn

from npudsl import after, core_limit, keep_output, on_stream, records


class Ordered(nn.Module):
    @records("go")
    def start(self, x):
        return x + 1

    @on_stream("s", sync="manual")
    @after("go")
    @records("done")
    @core_limit(4, 8)
    @keep_output
    def work(self, x):
        return x * 2

    @after("done")
    def finish(self, y):
        return y - 1
