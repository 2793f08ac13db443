"""NPD510: core_limit counts read at call time cannot be verified; NPD301/NPD302 skip them."""

from torch import nn

from npudsl import core_limit, on_stream


class Configured(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg

    @on_stream("side")
    @core_limit("self.cfg.aic", "self.cfg.aiv")  # W: NPD510@6
    def side(self, x):
        return x * 2

    @core_limit("self.cfg.main_aic", 40)  # W: NPD510@6
    def forward(self, x):
        y = self.side(x)
        return y + x


class Partly(nn.Module):
    @on_stream("side")
    @core_limit(25, "vector")  # E: NPD301@6 W: NPD510@6
    def side(self, x, vector=16):
        return x * 2

    @core_limit(16, 32)
    def forward(self, x):
        y = self.side(x)
        return y + x
