"""A decorated model for the npudsl.compile tests (transformed in-process, never edited)."""

from __future__ import annotations

import torch
from torch import nn

from npudsl import on_stream

__all__ = ["Block", "Net"]


class Block(nn.Module):
    @on_stream("shared")
    def shared(self, x: torch.Tensor) -> torch.Tensor:
        return x.sin()  # P:compiled

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 2
        s = self.shared(h)
        m = h + 1
        return m + s  # C:compiled


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(4, 4)
        self.block = Block()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(self.lin(x))
