"""NPD514: a shared event waited for that no function of the run records (this file is checked alone)."""

from torch import nn

from npudsl import after, on_stream


class SharedExpert(nn.Module):
    @on_stream("shared", sync="manual")
    @after("moe:before_dispatch")  # W: NPD514@6
    def gate_up(self, x):
        return x * 2
