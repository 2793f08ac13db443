"""Never names the package, yet its call sites are checked: one binds the result, one uses it at once."""

from torch import nn

from shared import Shared


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def forward(self, x):
        s = self.shared(x)
        return self.shared(x) + s  # W: NPD501@16
