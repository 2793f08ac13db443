"""One decoder block twice: with npudsl decorators, and written by hand with explicit ``npudsl.runtime`` calls.

The hand-written block spells exactly what the ``portable`` target generates for the
decorated one (same event names), so their captured graphs can be compared node for node.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream, runtime

__all__ = ["DecoratedBlock", "HandBlock", "build", "inputs"]

_FORK = "bench.overhead_models.SharedExpert.forward.fork"
_JOIN = "bench.overhead_models.SharedExpert.forward.join"


def _mlp(x: torch.Tensor, gate_up: nn.Linear, down: nn.Linear) -> torch.Tensor:
    gate, up = gate_up(x).chunk(2, dim=-1)
    return down(F.silu(gate) * up)


@on_stream("shared")
@keep_output
class SharedExpert(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _mlp(x, self.gate_up, self.down)


class HandSharedExpert(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _mlp(x, self.gate_up, self.down)


class DecoratedBlock(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.dense = nn.Linear(hidden, hidden, bias=False)
        self.shared = SharedExpert(hidden, inter)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(x)
        shared = self.shared(y)
        main = torch.relu(self.dense(y))
        return x + main + shared


class HandBlock(DecoratedBlock):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__(hidden, inter)
        self.shared = HandSharedExpert(hidden, inter)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(x)
        runtime.record(_FORK)
        with runtime.stream("shared", 0):
            runtime.wait(_FORK)
            runtime.record_stream(y, "shared")  # the main stream reads y last before the join, then may reuse it
            shared = self.shared(y)
            runtime.record(_JOIN)
        main = torch.relu(self.dense(y))
        runtime.wait(_JOIN)
        return x + main + shared


def build(kind: type[nn.Module], hidden: int, inter: int) -> nn.Module:
    """A block with the same weights whatever its kind (seeded)."""
    torch.manual_seed(0)
    return kind(hidden, inter).eval()


def inputs(tokens: int, hidden: int) -> torch.Tensor:
    return torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(1))
