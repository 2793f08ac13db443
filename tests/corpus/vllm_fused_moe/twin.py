"""Single-stream twin of :mod:`corpus.vllm_fused_moe` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class _Proj(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * in_features**-0.5)


class _Shared(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = _Proj(hidden, 2 * inter)
        self.down_proj = _Proj(inter, hidden)


class _Experts(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int) -> None:
        super().__init__()
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)


def _swiglu(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


class DeepseekMoE(nn.Module):
    def __init__(self, hidden: int, inter: int, shared_inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.experts = _Experts(hidden, inter, experts)
        self.shared_experts = _Shared(hidden, shared_inter)

    def forward(self, x: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        weights, ids = self.gate(x).softmax(dim=-1).topk(self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        shared = F.linear(_swiglu(F.linear(x, self.shared_experts.gate_up_proj.weight)),
                          self.shared_experts.down_proj.weight)
        rows, expert_ids = x.repeat_interleave(self.top_k, dim=0), ids.reshape(-1)
        hidden = _swiglu(torch.bmm(rows.unsqueeze(1), self.experts.w13[expert_ids]).squeeze(1))
        out = torch.bmm(hidden.unsqueeze(1), self.experts.w2[expert_ids]).squeeze(1)
        routed = (out.view(*weights.shape, -1) * weights.unsqueeze(-1)).sum(dim=1)
        return routed * 1.5 + shared
