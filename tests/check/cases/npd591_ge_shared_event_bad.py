"""A shared event ("ns:name") orders nothing on GE: a warning at each decorator that names one (--target ge)."""
# target: ge

from torch import nn

from npudsl import after, on_stream, records


class Block(nn.Module):
    @records("moe:ready")  # W: NPD591@6
    def produce(self, x):
        return x + 1

    @on_stream("side", sync="manual")
    @after("moe:ready")  # W: NPD591@6
    def consume(self, y):
        return y * 2

    def forward(self, x):
        y = self.produce(x)
        return self.consume(y)
