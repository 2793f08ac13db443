import torch
from torch import nn

from npudsl import after, on_stream, records


class Fan(nn.Module):
    @on_stream("a", sync="manual")
    @records("left_done")
    def left(self, x):
        return x * 2

    @on_stream("b", sync="manual")
    @records("right_done")
    def right(self, x):
        return x * 3

    @after("left_done", "right_done")
    @records("both_read")
    @records("merged")
    def merge(self, left, right):
        return left + right
