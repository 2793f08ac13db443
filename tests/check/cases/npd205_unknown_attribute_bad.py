"""NPD205: a guard or a dotted core count reads an attribute that its class never defines."""

from torch import nn

from npudsl import core_limit, on_stream


class Config:
    LIMIT = 8


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.multistream = True


@on_stream("shared", when="self.multistrem")  # E: NPD205@2
class SharedExpert(Base):
    def forward(self, x):
        return x


class Block(Base):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.shared = SharedExpert()

    @on_stream("side", when="self.overlap")  # E: NPD205@6
    def branch(self, x):
        return x

    @core_limit("self.config.aic", 16)  # E: NPD205@6 W: NPD507@6 W: NPD510@6
    @on_stream("limited")
    def limited(self, x):
        return x

    @on_stream("other", when="Config.MULTISTREAM")  # E: NPD205@6
    def other(self, x):
        return x

    def forward(self, x):
        a = self.branch(x)
        b = self.limited(x)
        c = self.other(x)
        d = self.shared(x)
        return a + b + c + d
