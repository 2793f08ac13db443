"""Models with a guard mistake, for test_guard_errors: each decorator's position is what the errors name."""

from torch import nn

from npudsl import on_stream


class Flagged(nn.Module):
    def __init__(self):
        super().__init__()
        self.multistream = True

    @on_stream("side", when="enabled")  # P:tensor
    def branch(self, x, enabled=True):
        return x * 2

    @on_stream("other", when="self.multistrem")  # P:typo
    def typo(self, x):
        return x * 3

    def forward(self, x, enabled=True):
        return self.branch(x, enabled=enabled)
