import torch
from torch import nn

from npudsl import core_limit, on_stream


class Flexible(nn.Module):
    @on_stream("side", sync="manual")
    @core_limit(4, 8)
    def run(self, *args, scale=1.0, **kwargs):
        total = sum(args)
        return total * scale + kwargs.get("bias", 0)
