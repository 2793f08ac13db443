"""A chain of waits with a first link is not a cycle (seed 000's shape)."""

from torch import nn

from npudsl import after, on_stream, records


class Chain(nn.Module):
    @records("add_done")
    def add(self, x):
        return x + 1

    @on_stream("1", sync="manual")
    @after("add_done")
    @records("mm_done")
    def matmul(self, x):
        return x @ x

    @on_stream("2", sync="manual")
    @after("mm_done")
    @records("late_done")
    def late(self, x):
        return x

    @after("late_done", "mm_done")
    def finish(self, x):
        return x
