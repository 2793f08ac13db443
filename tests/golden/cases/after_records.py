import torch
from torch import nn

from npudsl import after, on_stream, records


class Pipeline(nn.Module):
    @records("ready")
    def produce(self, x):
        return x + 1

    @on_stream("consumer", sync="manual")
    @after("ready")
    def consume(self, y):
        return y.sum()
