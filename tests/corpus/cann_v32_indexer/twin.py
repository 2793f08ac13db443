"""Single-stream twin of :mod:`corpus.cann_v32_indexer` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn


def _rope_then_quant(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, rope: int) -> tuple[torch.Tensor, ...]:
    pe, nope = x.split([rope, x.shape[-1] - rope], dim=-1)
    pe1, pe2 = pe.chunk(2, dim=-1)
    x = torch.cat([pe * cos + torch.cat((-pe2, pe1), dim=-1) * sin, nope], dim=-1)
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-6) / 127
    return torch.round(x / scale), scale


class Indexer(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, heads: int, head_dim: int, rope_dim: int,
                 index_topk: int) -> None:
        super().__init__()
        self.dims = (heads, head_dim, rope_dim, index_topk)
        self.wq_b = nn.Linear(q_lora_rank, heads * head_dim, bias=False)
        self.wk = nn.Linear(hidden, head_dim, bias=False)
        self.weights_proj = nn.Linear(hidden, heads, bias=False)
        self.k_norm = nn.LayerNorm(head_dim)

    def forward(self, x, qr, cos_sin, key_cache, key_scale_cache, slot_mapping, is_prefill, c8_input_dict):
        heads, head_dim, rope, topk = self.dims
        cos, sin = cos_sin
        q_b = self.wq_b(qr) * c8_input_dict["pertoken_scale"]
        q, q_scale = _rope_then_quant(q_b.view(-1, heads, head_dim), cos.unsqueeze(1), sin.unsqueeze(1), rope)
        weights = (self.weights_proj(x) * heads**-0.5).unsqueeze(-1) * q_scale * head_dim**-0.5
        k, k_scale = _rope_then_quant(self.k_norm(self.wk(x)), cos, sin, rope)
        key_cache.index_copy_(0, slot_mapping, k)
        key_scale_cache.index_copy_(0, slot_mapping, k_scale)
        scores = torch.einsum("tnd,sd->tns", q, key_cache) * key_scale_cache.squeeze(-1)
        values, indices = (scores.relu() * weights).sum(dim=1).topk(topk, dim=-1)
        return values, indices
