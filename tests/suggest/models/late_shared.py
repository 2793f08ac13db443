"""Two decoder layers whose shared expert is called after the routed experts, whose result is used at once: on a
side stream it overlaps nothing where it stands; moved up above the routed experts, it runs beside them."""

import torch
from torch import nn
from torch.nn import functional as F


class SharedExpert(nn.Module):
    def __init__(self, hidden: int = 64, inter: int = 128) -> None:
        super().__init__()
        self.up = nn.Linear(hidden, inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.up(x)))


class Layer(nn.Module):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.shared = SharedExpert(hidden)

    def routed(self, y):
        return torch.sigmoid(y) * y + torch.tanh(y)

    def forward(self, x):
        y = self.norm(x)
        routed = self.routed(y)
        scaled = routed * 2
        # the shared expert, called last
        shared = self.shared(
            y)
        return x + scaled + shared


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def example_inputs():
    torch.manual_seed(0)
    return (torch.randn(16, 64),)
