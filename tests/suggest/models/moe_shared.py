"""A MoE block with a shared expert, nobody's decorators: the shared expert can run beside the routed ones."""

import torch
from torch import nn
from torch.nn import functional as F


class SharedExpert(nn.Module):
    def __init__(self, hidden: int = 64, inter: int = 256) -> None:
        super().__init__()
        self.up = nn.Linear(hidden, inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.up(x)))


class MoEBlock(nn.Module):
    def __init__(self, hidden: int = 64, inter: int = 128, experts: int = 4) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.router = nn.Linear(hidden, experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(experts, hidden, inter) * hidden**-0.5)
        self.w_out = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)
        self.shared_expert = SharedExpert(hidden)

    def routed(self, x):
        weights = self.router(x).softmax(dim=-1)
        hidden = F.silu(torch.einsum("th,ehi->tei", x, self.w_in))
        return torch.einsum("tei,eih,te->th", hidden, self.w_out, weights)

    def forward(self, x):
        y = self.norm(x)
        shared = self.shared_expert(y)
        routed = self.routed(y)
        return x + shared + routed


def example_inputs():
    return (torch.randn(16, 64, generator=torch.Generator().manual_seed(0)),)
