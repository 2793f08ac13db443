"""NPD107: the decorators of a class and of its forward are one set, as in eager mode."""

from torch import nn

from npudsl import core_limit, keep_output, on_stream


@on_stream("side")  # W: NPD502@2
@keep_output
class Twice(nn.Module):
    @on_stream("other")  # E: NPD107@6
    @core_limit(8, 16)  # W: NPD507@6
    def forward(self, x):
        return x


@keep_output
class KeptTwice(nn.Module):
    @keep_output(clone=True)  # E: NPD107@6
    def forward(self, x):
        return x
