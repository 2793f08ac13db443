"""NPD511: with --target cuda, a manual side stream that nothing on the main stream waits for again."""
# target: cuda

from torch import nn

from npudsl import after, on_stream, records


class Pipeline(nn.Module):
    @records("ready")
    def produce(self, x):
        return x + 1

    @on_stream("consumer", sync="manual")  # W: NPD511@6
    @after("ready")
    def consume(self, y):
        return y.sum()

    @on_stream("consumer", sync="manual")
    @records("partial")
    def consume_more(self, y):
        return y.mean()

    @on_stream("relay", sync="manual")  # W: NPD511@6
    @after("partial")
    @records("relayed")
    def relay(self, y):
        return y * 2

    @on_stream("sink", sync="manual")  # W: NPD511@6
    @after("relayed")
    def sink(self, y):
        return y
