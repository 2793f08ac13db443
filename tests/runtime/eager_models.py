"""Decorated, untransformed models for the eager-semantics tests."""

from __future__ import annotations

import types

import torch
from torch import nn

from npudsl import after, core_limit, keep_output, on_stream, records

__all__ = ["CONFIG", "Layer", "Manual", "Plain", "cloned", "kept", "scaled"]

CONFIG = types.SimpleNamespace(multistream=True, inner=types.SimpleNamespace(on=True))


class Plain(nn.Module):
    """The undecorated twin of :class:`Layer`."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.up = nn.Linear(4, 8)
        self.down = nn.Linear(8, 4)
        self.multistream = True

    def shared(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.down(torch.relu(self.up(x))), x * 3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + 1
        shared, tripled = self.shared(h)
        return h * 2 + shared + tripled


class Layer(Plain):
    @on_stream("shared", when="self.multistream")
    @core_limit(8, 16, when="CONFIG.inner.on")
    @keep_output(clone=True)
    @records("shared_done")
    def shared(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.down(torch.relu(self.up(x))), x * 3


class Manual(Plain):
    """sync="manual": the author orders the streams with events."""

    @records("h_ready")
    def ready(self, h: torch.Tensor) -> torch.Tensor:
        return h

    @on_stream("shared", sync="manual")
    @after("h_ready")
    @records("shared_done")
    @keep_output
    def shared(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.down(torch.relu(self.up(x))), x * 3

    @after("shared_done")
    def combine(self, h: torch.Tensor, shared: torch.Tensor, tripled: torch.Tensor) -> torch.Tensor:
        return h * 2 + shared + tripled

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ready(x + 1)
        shared, tripled = self.shared(h)
        return self.combine(h, shared, tripled)


@on_stream("side", when="CONFIG.multistream")
def scaled(x: torch.Tensor, factor: float = 2.0, *, use: bool = True) -> torch.Tensor:
    return x * factor if use else x


@keep_output(clone=True)
def cloned(x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor], int]:
    return x, [x], 7


@keep_output
def kept(x: torch.Tensor) -> torch.Tensor:
    return x
