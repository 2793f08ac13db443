"""One event per stream; the same event twice on one stream is fine."""

from torch import nn

from npudsl import after, on_stream, records


class Block(nn.Module):
    @on_stream("a", sync="manual")
    @after("start")
    @records("left_done")
    def left(self, x):
        return x

    @on_stream("a", sync="manual")
    @after("start")
    @records("left_done")
    def left_again(self, x):
        return x

    @on_stream("b", sync="manual")
    @after("start")
    @records("right_done")
    def right(self, x):
        return x

    @records("start")
    def main(self, x):
        return x

    @after("left_done", "right_done")
    def finish(self, x):
        return x
