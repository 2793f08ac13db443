"""The same order through an event of the class (no colon): GE carries it as a token (no NPD591)."""
# target: ge

from torch import nn

from npudsl import after, on_stream, records


class Block(nn.Module):
    @records("ready")
    def produce(self, x):
        return x + 1

    @on_stream("side", sync="manual")
    @after("ready")
    def consume(self, y):
        return y * 2

    def forward(self, x):
        y = self.produce(x)
        return self.consume(y)
