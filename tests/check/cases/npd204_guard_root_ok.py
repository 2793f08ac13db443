"""Guards rooted at self, a parameter, a module global or an import: each read in the function's scope."""

from torch import nn

import config
from npudsl import on_stream

MULTISTREAM = True


@on_stream("side", when="enabled")
def side(x, enabled: bool = True):
    return x * 2


class Block(nn.Module):
    multistream = True

    @on_stream("side", when="self.multistream")
    def branch(self, x):
        return x

    @on_stream("other", when="MULTISTREAM")
    def other(self, x):
        return x

    @on_stream("third", when="config.MULTISTREAM")
    def imported(self, x):
        return x

    @on_stream("fourth", when="options.multistream")
    def optional(self, x, options):
        return x

    def forward(self, x, options):
        a = self.branch(x)
        b = self.other(x)
        c = self.optional(x, options)
        d = self.imported(x)
        e = side(x)
        return a + b + c + d + e
