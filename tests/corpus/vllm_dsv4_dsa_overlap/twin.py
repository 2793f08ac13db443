"""Single-stream twin of :mod:`corpus.vllm_dsv4_dsa_overlap` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .layers import (dsa_kv_compress_scatter, dynamic_quant, hadamard_linear, hadamard_scale,
                     inplace_partial_rotary_mul, quantize_key_and_update_cache, select_topk, sparse_attn,
                     update_scale_cache)
from .weights import AttentionWeights, IndexerWeights, LayerWeights, Shape


class _Layer(LayerWeights):
    def __init__(self, shape: Shape, compress_ratio: int) -> None:
        super().__init__(shape)
        self.attn = AttentionWeights(shape, compress_ratio, IndexerWeights)


def _indexer(ix: IndexerWeights, x: torch.Tensor, qr: torch.Tensor, qr_scale: torch.Tensor | None,
             caches: tuple[torch.Tensor, ...], cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    _, _, _, state_cache, k_cache, scale_cache = caches
    qr_quant, qr_scale = (qr, qr_scale) if qr_scale is not None else dynamic_quant(qr)
    kv, slots = ix.compressor(x, state_cache)
    if kv.numel() > 0:
        _, kv_scale = quantize_key_and_update_cache(kv @ ix.hadamard, k_cache, slots)
        update_scale_cache(kv_scale, scale_cache, slots)
    q = ix.cv_wq_b.matmul(qr_quant, qr_scale).view(-1, ix.n_heads, ix.head_dim)
    inplace_partial_rotary_mul(q.unsqueeze(1), cos, sin, ix.head_dim - ix.rope_head_dim)
    q = hadamard_scale(*hadamard_linear(q, ix.hadamard), scale=q.size(-1) ** -0.5)
    return q


def _attention(a: AttentionWeights, x: torch.Tensor, caches: tuple[torch.Tensor, ...], cos: torch.Tensor,
               sin: torch.Tensor, slot_mapping: torch.Tensor, is_prefill: bool) -> torch.Tensor:
    cmp_cache, swa_cache, state_cache = caches[:3]
    kv = a.kv_norm(a.cv_wkv.matmul(*a.cv_wkv.quantize(x))).view(-1, 1, a.head_dim)
    inplace_partial_rotary_mul(kv.unsqueeze(1), cos, sin, a.nope_head_dim)
    dsa_kv_compress_scatter(swa_cache, kv, slot_mapping)
    wq_a = a.cv_wq_a.matmul(*a.cv_wq_a.quantize(x))
    if is_prefill:
        qr, qr_scale = a.q_norm(wq_a), None
        q = a.cv_wq_b.matmul(*a.cv_wq_b.quantize(qr))
    else:
        qr, qr_scale = dynamic_quant(a.q_norm(wq_a))
        q = a.cv_wq_b.matmul(qr, qr_scale)
    q = F.rms_norm(q.unflatten(-1, (a.n_local_heads, a.head_dim)), (a.head_dim,), eps=1e-6)
    inplace_partial_rotary_mul(q.unsqueeze(1), cos, sin, a.nope_head_dim)
    topk = None
    if a.compress_ratio == 4:
        ix = a.indexer
        indexer_q = _indexer(ix, x, qr, qr_scale, caches, cos, sin)
        compressed, slots = a.compressor(x, state_cache)
        q_quant, q_scale = dynamic_quant(indexer_q)
        if compressed.shape[0] > 0:
            dsa_kv_compress_scatter(cmp_cache, compressed, slots)
        weights = ix.weights_proj(x) * (ix.softmax_scale * ix.n_heads**-0.5)
        topk = select_topk(q_quant, weights, q_scale, caches[4], caches[5], ix.index_topk)
    o = sparse_attn(q, swa_cache, a.attn_sink, a.softmax_scale, cmp_kv=cmp_cache if topk is not None else None,
                    cmp_sparse_indices=topk)
    inplace_partial_rotary_mul(o.unsqueeze(1), cos, -sin, a.nope_head_dim)
    return a.wo(o.flatten(1))


class DeepseekV4Model(nn.Module):
    def __init__(self, shape: Shape, compress_ratios: tuple[int, ...]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(_Layer(shape, r) for r in compress_ratios)
        self.register_buffer("inv_freq", 1e4 ** (-torch.arange(0, shape["rope_dim"], 2) / shape["rope_dim"]),
                             persistent=False)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, kv_caches: tuple[tuple[torch.Tensor, ...], ...],
                slot_mapping: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        freqs = positions.unsqueeze(-1).float() * self.inv_freq
        cos, sin = freqs.cos().repeat(1, 2), freqs.sin().repeat(1, 2)
        for layer, caches in zip(self.layers, kv_caches):
            x = x + _attention(layer.attn, layer.attn_norm(x), caches, cos, sin, slot_mapping, is_prefill)
            x = x + layer.ffn(layer.ffn_norm(x))
        return x
