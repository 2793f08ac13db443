"""NPD205: a guard or a dotted core count misspells an attribute that its class defines."""

from torch import nn

from npudsl import core_limit, on_stream


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

    @core_limit("self.cgf.aic", 16)  # E: NPD205@6 W: NPD507@6 W: NPD510@6
    @on_stream("limited")
    def limited(self, x):
        return x

    def forward(self, x):
        a = self.limited(x)
        b = self.shared(x)
        return a + b
