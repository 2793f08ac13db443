"""The undecorated parts of GLM-4 MoE, shared by the decorated model and its twin: norm, attention, MLP, routing.

Shaped after sglang ``python/sglang/srt/models/glm4_moe.py``: ``Glm4MoeMLP`` (gate/up,
SiLU-and-mul, down), ``Glm4MoeGate`` (an fp32 projection to the expert logits with
``e_score_correction_bias``), the grouped top-k of ``TopK(use_grouped_topk=True)``
(sigmoid scores, the bias only for choosing, renormalized weights), and the routed
experts as dispatch / two grouped matmuls / combine. Attention is a tiny
single-head stand-in for ``Glm4MoeAttention`` with ``RadixAttention``: it writes
this batch's keys and values into the KV cache pool in place (``out_cache_loc``),
as the attention backend does, then attends over what it wrote.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["Attention", "Gate", "MLP", "RMSNorm", "RoutedExperts", "grouped_topk"]


class RMSNorm(nn.Module):
    """sglang's ``RMSNorm(x, residual)``: adds the residual first when given; returns (normed, new residual)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        residual = x if residual is None else x + residual
        return F.rms_norm(residual, (residual.shape[-1],), self.weight, eps=1e-5), residual


class Attention(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(hidden, 3 * hidden, bias=True)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor, kv_cache: torch.Tensor, out_cache_loc: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(x).chunk(3, dim=-1)
        kv_cache[0].index_copy_(0, out_cache_loc, k)
        kv_cache[1].index_copy_(0, out_cache_loc, v)
        keys, values = kv_cache[0][out_cache_loc], kv_cache[1][out_cache_loc]
        causal = torch.ones(x.shape[0], x.shape[0], dtype=torch.bool).tril()
        scores = (q @ keys.T * x.shape[-1] ** -0.5).masked_fill(~causal, float("-inf"))
        return self.o_proj(scores.softmax(dim=-1) @ values)


class MLP(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class Gate(nn.Module):
    def __init__(self, hidden: int, experts: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(experts, hidden) * hidden**-0.5)
        self.e_score_correction_bias = nn.Parameter(0.1 * torch.randn(experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x.to(torch.float32), self.weight.to(torch.float32))


def grouped_topk(logits: torch.Tensor, bias: torch.Tensor, top_k: int, n_group: int,
                 topk_group: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sigmoid scores; groups ranked by their two best biased scores; top-k within the kept groups."""
    scores = logits.sigmoid()
    biased = scores + bias
    groups = biased.view(logits.shape[0], n_group, -1).topk(2, dim=-1).values.sum(dim=-1)
    kept = torch.zeros_like(groups).scatter(1, groups.topk(topk_group, dim=-1).indices, 1.0)
    mask = kept.repeat_interleave(logits.shape[1] // n_group, dim=1).bool()
    ids = biased.masked_fill(~mask, float("-inf")).topk(top_k, dim=-1).indices
    weights = scores.gather(1, ids)
    return weights / weights.sum(dim=-1, keepdim=True), ids


class RoutedExperts(nn.Module):
    """``self.experts``: dispatch (each token once per chosen expert), two grouped matmuls, combine."""

    def __init__(self, hidden: int, inter: int, experts: int) -> None:
        super().__init__()
        self.w13_weight = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2_weight = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, x: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
        rows, ids = x.repeat_interleave(topk_ids.shape[1], dim=0), topk_ids.reshape(-1)
        gate, up = torch.bmm(rows.unsqueeze(1), self.w13_weight[ids]).squeeze(1).chunk(2, dim=-1)
        down = torch.bmm((F.silu(gate) * up).unsqueeze(1), self.w2_weight[ids]).squeeze(1)
        return (down.view(*topk_weights.shape, -1) * topk_weights.unsqueeze(-1).to(down.dtype)).sum(dim=1)
