"""Core limits within the device, up to every core."""

from torch import nn

from npudsl import core_limit


class Fits(nn.Module):
    @core_limit(24, 48)
    def everything(self, x):
        return x

    @core_limit(1, 1)
    def tiny(self, x):
        return x
