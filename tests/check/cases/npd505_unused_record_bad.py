"""NPD505: events recorded that nothing waits for."""

from torch import nn

from npudsl import after, on_stream, records


class Block(nn.Module):
    @on_stream("side", sync="manual")
    @after("ready")
    @records("done", "extra")  # W: NPD505@6
    def work(self, x):
        return x

    @records("ready")
    def prepare(self, x):
        return x

    @after("done")
    def finish(self, x):
        return x
