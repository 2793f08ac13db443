import torch
from torch import nn

from npudsl import after, core_limit, keep_output, on_stream, records


class Ordered(nn.Module):
    @records("go")
    def start(self, x):
        return x + 1

    @keep_output
    @core_limit(4, 8)
    @records("done")
    @after("go")
    @on_stream("s", sync="manual")
    def work(self, x):
        return x * 2

    @after("done")
    def finish(self, y):
        return y - 1
