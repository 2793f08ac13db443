"""Visible call sites: a method of the same class, a decorated submodule; manual streams need none."""

from torch import nn

from npudsl import after, on_stream, records


@on_stream("shared")
class Shared(nn.Module):
    def forward(self, x):
        return x


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    @on_stream("side")
    def branch(self, x):
        return x

    @on_stream("manual", sync="manual")
    @after("go")
    def by_hand(self, x):
        return x

    @records("go")
    def start(self, x):
        return x

    def forward(self, x):
        s = self.shared(x)
        b = self.branch(x)
        return s + b
