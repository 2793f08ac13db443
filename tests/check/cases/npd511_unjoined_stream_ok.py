"""Every manual side stream is joined: its event is waited for on the main stream, directly or through
a joined stream; automatic streams join at their call sites (no NPD511 with --target cuda)."""
# target: cuda

from torch import nn

from npudsl import after, on_stream, records


class Pipeline(nn.Module):
    @records("ready")
    def produce(self, x):
        return x + 1

    @on_stream("consumer", sync="manual")
    @after("ready")
    @records("consumed")
    def consume(self, y):
        return y.sum()

    @on_stream("relay", sync="manual")
    @after("consumed")
    @records("relayed")
    def relay(self, y):
        return y * 2

    @after("relayed")
    def use(self, y):
        return y

    @on_stream("auto")
    def branch(self, x):
        return x.cos()

    def forward(self, x):
        b = self.branch(x)
        y = self.use(self.relay(self.consume(self.produce(x))))
        return y + b
