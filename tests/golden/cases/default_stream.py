import torch
from torch import nn

from npudsl import after, on_stream, records


class BackToMain(nn.Module):
    @on_stream("side", sync="manual")
    @records("side_done")
    def side(self, x):
        return x * 2

    @on_stream("default")
    @after("side_done")
    def main(self, x):
        return x + 1
