"""Guards and counts whose attributes the class defines, or whose class cannot be seen whole: no NPD205."""

from torch import nn

from npudsl import on_stream
from somewhere import RemoteBase


class Config:
    MULTISTREAM = True


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.multistream = True
        self.register_buffer("enabled", None)


@on_stream("shared", when="self.multistream")
class SharedExpert(Base):
    def forward(self, x):
        return x


class Block(Base):
    overlap: bool = True

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.shared = SharedExpert()

    @property
    def wide(self):
        return self.cfg.wide

    @on_stream("side", when="self.overlap")
    def branch(self, x):
        return x

    @on_stream("limited", when="self.wide")
    def limited(self, x):
        return x

    @on_stream("other", when="Config.MULTISTREAM")
    def other(self, x):
        return x

    @on_stream("buffered", when="self.enabled")
    def buffered(self, x):
        return x

    @on_stream("training", when="self.training")
    def trained(self, x):
        return x

    def forward(self, x):
        a = self.branch(x)
        b = self.limited(x)
        c = self.other(x)
        d = self.shared(x)
        e = self.buffered(x)
        f = self.trained(x)
        return a + b + c + d + e + f


class Remote(RemoteBase):
    @on_stream("remote", when="self.defined_by_the_base")
    def branch(self, x):
        return x

    def forward(self, x):
        y = self.branch(x)
        return y + x
