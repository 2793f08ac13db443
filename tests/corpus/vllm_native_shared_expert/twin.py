"""Single-stream twin of :mod:`corpus.vllm_native_shared_expert` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .ops import token_combine, token_dispatch


class _Routed(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights, ids = self.gate(x).softmax(dim=-1).topk(self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        rows, expert_ids = token_dispatch(x, ids, self.top_k)
        gate, up = torch.bmm(rows.unsqueeze(1), self.w13[expert_ids]).squeeze(1).chunk(2, dim=-1)
        return token_combine(torch.bmm((F.silu(gate) * up).unsqueeze(1), self.w2[expert_ids]).squeeze(1), weights)


class _Shared(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)
        self.expert_gate = nn.Linear(hidden, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return torch.sigmoid(self.expert_gate(x)) * self.down_proj(F.silu(gate) * up)


class MoELayer(nn.Module):
    def __init__(self, hidden: int, inter: int, shared_inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.experts = _Routed(hidden, inter, experts, top_k)
        self.shared_experts = _Shared(hidden, shared_inter)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.experts(x) + self.shared_experts(x)
