"""Spellings npudsl resolves with certainty: aliases, module aliases, guarded imports, the user's own names."""

import torch
from torch import nn

import npudsl as nd
import npudsl.decorators

try:
    from npudsl import on_stream as stream
except ImportError:  # where npudsl runs, this never does
    def stream(*args, **kwargs):
        return lambda fn: fn

keep = nd.keep_output


def records(fn):  # the user's own, never npudsl's
    return fn


class Block(nn.Module):
    @stream("side")
    @nd.core_limit(8, 16)
    def side(self, x):
        return torch.relu(x)

    @npudsl.decorators.on_stream("other")
    @keep(clone=True)
    @nd.core_limit(8, 16)
    def other(self, x):
        return x * 2

    @records
    @nd.core_limit(8, 16)
    def forward(self, x):
        def on_stream(fn):  # a local of the same name
            return fn

        @on_stream
        def inner(y):
            return y + 1

        a = self.side(x)
        b = self.other(x)
        return inner(a) + b
