import npudsl
import torch
from npudsl import keep_output as keep
from npudsl import on_stream as stream
from torch import nn


class Aliased(nn.Module):
    @npudsl.on_stream("side", sync="manual")
    @npudsl.records("done")
    def first(self, x):
        return x + 1

    @stream("side", sync="manual")
    @keep(clone=True)
    def second(self, x):
        return x * 2
