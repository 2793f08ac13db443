"""Two instances of one class in different roles: only the first should move, through a wrapper."""

import torch
from torch import nn


class Branch(nn.Module):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        return torch.relu(self.proj(x))


class Model(nn.Module):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.left = Branch(hidden)
        self.right = Branch(hidden)

    def forward(self, x):
        a = self.left(x)
        b = self.right(x)
        return a * b


def example_inputs():
    return (torch.randn(16, 64, generator=torch.Generator().manual_seed(0)),)
