"""NPD301: a core limit beyond the device (the default profile, atlas-a2: 24 cube / 48 vector cores)."""

from torch import nn

from npudsl import core_limit, on_stream


class Greedy(nn.Module):
    @core_limit(25, 16)  # E: NPD301@6
    def cube_heavy(self, x):
        return x

    @core_limit(8, 49)  # E: NPD301@6
    def vector_heavy(self, x):
        return x


@on_stream("side")
@core_limit(32, 64)  # E: NPD301@2
def side(x):
    return x


def caller(x):
    y = side(x)
    return y
