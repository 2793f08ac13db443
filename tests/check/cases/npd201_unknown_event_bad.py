"""NPD201: waits for events that nothing in the scope records."""

import torch
from torch import nn

from npudsl import after, on_stream, records


class Block(nn.Module):
    @on_stream("side", sync="manual")
    @records("dispatched")  # W: NPD505@6
    def dispatch(self, x):
        return x * 2

    @on_stream("side", sync="manual")
    @after("dispatchd")  # E: NPD201@6
    def combine(self, x):
        return x + 1

    @after("never_made")  # E: NPD201@6
    def finish(self, x):
        return torch.relu(x)

    def forward(self, x):
        a = self.dispatch(x)
        b = self.combine(a)
        return self.finish(b)


class Other(nn.Module):
    @on_stream("other", sync="manual")
    @after("dispatched")  # E: NPD201@6
    def late(self, x):
        return x


@records("module_done")  # W: NPD505@2
def producer(x):
    return x


@on_stream("aux", sync="manual")
@after("module_don")  # E: NPD201@2
def consumer(x):
    return x
