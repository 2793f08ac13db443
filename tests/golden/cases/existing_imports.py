from contextlib import nullcontext

import torch
import torchair
from npudsl import compile as npudsl_compile
from npudsl import on_stream
from torch import nn


class Existing(nn.Module):
    @on_stream("side", when="self.enabled", sync="manual")
    def side(self, x):
        return x + 1


def build(model):
    return npudsl_compile(model)
