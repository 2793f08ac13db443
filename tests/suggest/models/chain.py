"""A strict chain: each call needs the one before, so nothing can overlap."""

import torch
from torch import nn


class Stage(nn.Module):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        return torch.tanh(self.proj(x))


class Chain(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = Stage()
        self.second = Stage()

    def scale(self, x):
        return x * 2

    def forward(self, x):
        return self.scale(self.second(self.first(x)))


def example_inputs():
    return (torch.randn(16, 64, generator=torch.Generator().manual_seed(0)),)
