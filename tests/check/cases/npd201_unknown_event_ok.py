"""Every waited event is recorded in the same scope (the class, or the module for functions)."""

from torch import nn

from npudsl import after, on_stream, records


class Block(nn.Module):
    @on_stream("side", sync="manual")
    @after("ready")
    @records("dispatched")
    def dispatch(self, x):
        return x * 2

    @records("ready")
    def prepare(self, x):
        return x

    @after("dispatched")
    def combine(self, x):
        return x + 1


@records("module_done")
def producer(x):
    return x


@on_stream("aux", sync="manual")
@after("module_done")
def consumer(x):
    return x
