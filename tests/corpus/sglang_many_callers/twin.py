"""Single-stream twin of :mod:`corpus.sglang_many_callers` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class _Routed(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int) -> None:
        super().__init__()
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)


class _Shared(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)


class _Moe(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.experts = _Routed(hidden, inter, experts)
        self.shared_experts = _Shared(hidden, inter)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        routed = self.experts
        weights, ids = routed.gate(x).softmax(dim=-1).topk(self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        mask = x.new_zeros(x.shape[0], routed.w13.shape[0]).scatter(-1, ids, weights)
        gate, up = torch.einsum("th,ehi->eti", x, routed.w13).chunk(2, dim=-1)
        out = torch.einsum("eti,eih,te->th", F.silu(gate) * up, routed.w2, mask)
        gate, up = self.shared_experts.gate_up_proj(x).chunk(2, dim=-1)
        return out * 2.5 + self.shared_experts.down_proj(F.silu(gate) * up)


class _NextN(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, vocab: int) -> None:
        super().__init__()
        self.enorm = nn.RMSNorm(hidden, eps=1e-6)
        self.hnorm = nn.RMSNorm(hidden, eps=1e-6)
        self.eh_proj = nn.Linear(2 * hidden, hidden, bias=False)
        self.mlp = _Moe(hidden, inter, experts, top_k)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)


class DeepseekWithNextN(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, vocab: int, draft_topk: int) -> None:
        super().__init__()
        self.draft_topk = draft_topk
        self.norm = nn.RMSNorm(hidden, eps=1e-6)
        self.mlp = _Moe(hidden, inter, experts, top_k)
        self.nextn = _NextN(hidden, inter, experts, top_k, vocab)

    def forward(self, x: torch.Tensor, embeds: torch.Tensor):
        x = x + self.mlp(self.norm(x))
        head = self.nextn
        x = head.eh_proj(torch.cat([head.enorm(embeds), head.hnorm(x)], dim=-1))
        x = x + head.mlp(x)
        probs, tokens = head.lm_head(x).softmax(dim=-1).topk(self.draft_topk, dim=-1)
        return x, probs, tokens
