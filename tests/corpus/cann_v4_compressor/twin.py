"""Single-stream twin of :mod:`corpus.cann_v4_compressor` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn

from .layers import (RMSNorm, dynamic_quant, inplace_partial_rotary_mul, lightning_indexer, sparse_attention,
                     update_win_kv)
from .weights import AttentionWeights, IndexerWeights, LayerWeights


class _Attention(AttentionWeights):
    def __init__(self, shape: dict[str, int], compress_ratio: int) -> None:
        super().__init__(shape, compress_ratio, IndexerWeights)


class _Layer(LayerWeights):
    def __init__(self, shape: dict[str, int], compress_ratio: int) -> None:
        super().__init__(shape)
        self.attn = _Attention(shape, compress_ratio)


def _indexer(ix: IndexerWeights, x: torch.Tensor, qr: torch.Tensor, qr_scale: torch.Tensor, cos: torch.Tensor,
             sin: torch.Tensor, li_cache: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    q = ix.wq_b(qr, qr_scale).view(-1, ix.n_heads, ix.head_dim)
    inplace_partial_rotary_mul(q, cos, sin, ix.rope_dim)
    q, q_scale = dynamic_quant(q @ ix.hadamard_matrix)
    weights = ix.weights_proj(x) * (ix.softmax_scale * ix.n_heads**-0.5)
    ix.compressor(x, li_cache)
    return lightning_indexer(q, q_scale, weights, li_cache, valid, ix.index_topk)


def _attention(a: AttentionWeights, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, slot_mapping: torch.Tensor,
               metadata: dict[str, torch.Tensor], cache: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> torch.Tensor:
    win_kv, cmp_kv, li_cache = cache
    qr, qr_scale = dynamic_quant(a.q_norm(a.wq_a(x)))
    kv = a.kv_norm(a.wkv(x))
    inplace_partial_rotary_mul(kv, cos, sin, a.rope_dim)
    q = a.q_b_norm(a.wq_b(qr, qr_scale).unflatten(-1, (a.num_heads_per_rank, a.head_dim)))
    inplace_partial_rotary_mul(q, cos, sin, a.rope_dim)
    update_win_kv(kv, slot_mapping, win_kv)
    topk_idxs = None
    if a.compress_ratio > 1:
        a.compressor(x, cmp_kv)
    if a.compress_ratio == 4:
        topk_idxs = _indexer(a.indexer, x, qr, qr_scale, cos, sin, li_cache, metadata["li_metadata"])
    o = sparse_attention(q, win_kv, cmp_kv if a.compress_ratio > 1 else None, topk_idxs,
                         metadata[f"c{a.compress_ratio}a_metadata"])
    return a.wo(o)


class DeepseekV4Model(nn.Module):
    def __init__(self, shape: dict[str, int], compress_ratios: tuple[int, ...]) -> None:
        super().__init__()
        self.cmp_slots, self.rope_dim = shape["cmp_slots"], shape["rope_dim"]
        self.layers = nn.ModuleList(_Layer(shape, ratio) for ratio in compress_ratios)
        self.norm = RMSNorm(shape["hidden"])

    def forward(self, x: torch.Tensor, positions: torch.Tensor, slot_mapping: torch.Tensor,
                actual_seq_k: torch.Tensor,
                kv_caches: tuple[tuple[torch.Tensor, torch.Tensor, torch.Tensor], ...]) -> torch.Tensor:
        metadata = {f"c{r}a_metadata": ((actual_seq_k + r - 1) // r).clamp(max=self.cmp_slots) for r in (4, 128)}
        metadata["c1a_metadata"] = actual_seq_k.clone()
        metadata["li_metadata"] = metadata["c4a_metadata"].clone()
        freqs = positions.to(torch.float32).unsqueeze(-1) * 10000 ** -(
            torch.arange(0, self.rope_dim, 2, dtype=torch.float32) / self.rope_dim)
        cos, sin = freqs.cos(), freqs.sin()
        for layer, cache in zip(self.layers, kv_caches):
            x = x + _attention(layer.attn, layer.attn_norm(x), cos, sin, slot_mapping, metadata, cache)
            x = x + layer.ffn(layer.ffn_norm(x))
        return self.norm(x)
