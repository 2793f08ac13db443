"""A MoE decode block at realistic sizes: routed experts on the main stream, the shared expert beside them.

``DecoratedMoE`` says it with npudsl (transform it for ``cuda``); ``HandMoE`` writes the
same overlap with ``torch.cuda`` streams by hand; ``SingleMoE`` runs both on one
stream; ``SharedOnly`` and ``RoutedOnly`` are the two branches alone (the ideal is
the longer one). All share one set of weights.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream

__all__ = ["DecoratedMoE", "HandMoE", "RoutedOnly", "SharedOnly", "SingleMoE", "Weights"]


class Weights(nn.Module):
    def __init__(self, hidden: int, shared_inter: int, experts: int, expert_inter: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.norm = nn.RMSNorm(hidden)
        self.router = nn.Linear(hidden, experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(experts, hidden, 2 * expert_inter) * hidden**-0.5)
        self.w_out = nn.Parameter(torch.randn(experts, expert_inter, hidden) * expert_inter**-0.5)
        self.gate_up = nn.Linear(hidden, 2 * shared_inter, bias=False)
        self.down = nn.Linear(shared_inter, hidden, bias=False)


def routed(w: Weights, y: torch.Tensor) -> torch.Tensor:
    """Top-k routing; every expert reads its weights once (at decode batch sizes nearly all are hit)."""
    weights, chosen = w.router(y).softmax(dim=-1).topk(w.top_k, dim=-1)
    mask = torch.zeros(y.shape[0], w.w_in.shape[0], dtype=y.dtype, device=y.device).scatter(-1, chosen, weights)
    gate, up = torch.bmm(y.expand(w.w_in.shape[0], *y.shape), w.w_in).chunk(2, dim=-1)
    return torch.einsum("eth,te->th", torch.bmm(F.silu(gate) * up, w.w_out), mask)


def shared(w: Weights, y: torch.Tensor) -> torch.Tensor:
    gate, up = w.gate_up(y).chunk(2, dim=-1)
    return w.down(F.silu(gate) * up)


@on_stream("shared")
@keep_output
class SharedExpert(nn.Module):
    def __init__(self, w: Weights) -> None:
        super().__init__()
        self.w = w

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        return shared(self.w, y)


class DecoratedMoE(nn.Module):
    def __init__(self, w: Weights) -> None:
        super().__init__()
        self.w = w
        self.shared = SharedExpert(w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.w.norm(x)
        s = self.shared(y)
        r = routed(self.w, y)
        return x + r + s


class HandMoE(nn.Module):
    def __init__(self, w: Weights) -> None:
        super().__init__()
        self.w = w
        self.side = torch.cuda.Stream()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.w.norm(x)
        main = torch.cuda.current_stream()
        self.side.wait_stream(main)
        with torch.cuda.stream(self.side):
            s = shared(self.w, y)
        r = routed(self.w, y)
        main.wait_stream(self.side)
        s.record_stream(main)
        return x + r + s


class SingleMoE(nn.Module):
    def __init__(self, w: Weights) -> None:
        super().__init__()
        self.w = w

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.w.norm(x)
        return x + routed(self.w, y) + shared(self.w, y)


class SharedOnly(SingleMoE):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + shared(self.w, self.w.norm(x))


class RoutedOnly(SingleMoE):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + routed(self.w, self.w.norm(x))
