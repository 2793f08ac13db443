"""A manual side stream that waits for its input once covers its later work; automatic streams fork."""

from torch import nn

from npudsl import after, on_stream, records


class Block(nn.Module):
    @records("ready")
    def prepare(self, x):
        return x

    @on_stream("copy", sync="manual")
    @after("ready")
    def copy(self, x):
        return x.clone()

    @on_stream("copy", sync="manual")
    def copy_more(self, x):
        return x.clone()

    @on_stream("auto")
    def automatic(self, x):
        return x

    def forward(self, x):
        a = self.automatic(x)
        return a
