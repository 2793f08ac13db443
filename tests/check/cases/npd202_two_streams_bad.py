"""NPD202: one event recorded on two different streams."""

from torch import nn

from npudsl import after, on_stream, records


class Block(nn.Module):
    @on_stream("a", sync="manual")
    @after("start")
    @records("done")
    def left(self, x):
        return x

    @on_stream("b", sync="manual")
    @after("start")
    @records("done")  # E: NPD202@6
    def right(self, x):
        return x

    @records("done")  # E: NPD202@6
    @records("start")
    def main(self, x):
        return x

    @after("done")
    def finish(self, x):
        return x
