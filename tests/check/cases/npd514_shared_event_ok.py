"""A shared event recorded by one class and waited for by another (files of one run may share it too)."""

from torch import nn

from npudsl import after, on_stream, records


class Routed(nn.Module):
    @records("moe:before_dispatch")
    def dispatch(self, x):
        return x + 1


class SharedExpert(nn.Module):
    @on_stream("shared", sync="manual")
    @after("moe:before_dispatch")
    def gate_up(self, x):
        return x * 2
