"""DeepSeek-V4's DSA attention on vllm-ascend by hand: per layer one block for the prolog's KV half, and in a c4
layer one more for the indexer's cache updates and its weights projection.

Every layer forks once after the query's quantization: "dsv4_dsa_overlap" quantizes,
projects, norms and rotates ``kv`` and writes it into the window cache in place,
in one block (upstream's three parts and their waits order no data). A window-only
layer joins before the sparse attention reads that cache. A c4 layer goes on with
the indexer: its compressor's keys (made on main) need a second fork, after which the
overlap stream quantizes them into the key cache, writes their scales into the scale
cache and projects the head weights, while main runs the indexer's query, the
attention's compressor and its compressed-KV scatter; main joins before the weights
are scaled (the top-k then reads both caches). A model built with
``multistream=False`` runs on one stream.
"""

from __future__ import annotations

import torch
from corpus.vllm_dsv4_dsa_overlap.layers import (
    dsa_kv_compress_scatter,
    dynamic_quant,
    hadamard_linear,
    hadamard_scale,
    inplace_partial_rotary_mul,
    quantize_key_and_update_cache,
    select_topk,
    sparse_attn,
    update_scale_cache,
)
from torch import nn
from torch.nn import functional as F

from npudsl import runtime

SOURCE = "corpus:vllm_dsv4_dsa_overlap"
USER_EVENTS = ()
AUX = "dsv4_dsa_overlap"


def _kv_half(
    a: nn.Module,
    x: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    swa_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> None:
    kv = a.kv_norm(a.cv_wkv.matmul(*a.cv_wkv.quantize(x))).view(-1, 1, a.head_dim)
    inplace_partial_rotary_mul(kv.unsqueeze(1), cos, sin, a.nope_head_dim)
    dsa_kv_compress_scatter(swa_cache, kv, slot_mapping)


def _query(
    a: nn.Module, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, is_prefill: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    wq_a = a.cv_wq_a.matmul(*a.cv_wq_a.quantize(x))
    if is_prefill:
        qr, qr_scale = a.q_norm(wq_a), None
        q = a.cv_wq_b.matmul(*a.cv_wq_b.quantize(qr))
    else:
        qr, qr_scale = dynamic_quant(a.q_norm(wq_a))
        q = a.cv_wq_b.matmul(qr, qr_scale)
    q = F.rms_norm(q.unflatten(-1, (a.n_local_heads, a.head_dim)), (a.head_dim,), eps=1e-6)
    inplace_partial_rotary_mul(q.unsqueeze(1), cos, sin, a.nope_head_dim)
    return q, qr, qr_scale


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _indexer(
        self,
        a: nn.Module,
        x: torch.Tensor,
        qr: torch.Tensor,
        qr_scale: torch.Tensor | None,
        caches: tuple[torch.Tensor, ...],
        cos: torch.Tensor,
        sin: torch.Tensor,
    ) -> torch.Tensor:
        ix, (cmp_cache, _, state_cache, ix_state, k_cache, scale_cache) = a.indexer, caches
        qr_quant, qr_scale = (qr, qr_scale) if qr_scale is not None else dynamic_quant(qr)
        kv, slots = ix.compressor(x, ix_state)
        runtime.record("indexer_fork")
        with runtime.stream(AUX):
            runtime.wait("indexer_fork")
            runtime.record_stream(kv, AUX)
            runtime.record_stream(slots, AUX)
            runtime.record_stream(x, AUX)
            if kv.numel() > 0:
                _, kv_scale = quantize_key_and_update_cache(kv @ ix.hadamard, k_cache, slots)
                update_scale_cache(kv_scale, scale_cache, slots)
            weights_proj = ix.weights_proj(x)
            runtime.record("indexer_join")
        q = ix.cv_wq_b.matmul(qr_quant, qr_scale).view(-1, ix.n_heads, ix.head_dim)
        inplace_partial_rotary_mul(q.unsqueeze(1), cos, sin, ix.head_dim - ix.rope_head_dim)
        q = hadamard_scale(*hadamard_linear(q, ix.hadamard), scale=q.size(-1) ** -0.5)
        compressed, cmp_slots = a.compressor(x, state_cache)
        q_quant, q_scale = dynamic_quant(q)
        if compressed.shape[0] > 0:
            dsa_kv_compress_scatter(cmp_cache, compressed, cmp_slots)
        runtime.wait("indexer_join")
        weights = weights_proj * (ix.softmax_scale * ix.n_heads**-0.5)
        return select_topk(q_quant, weights, q_scale, k_cache, scale_cache, ix.index_topk)

    def _attention(
        self,
        a: nn.Module,
        x: torch.Tensor,
        caches: tuple[torch.Tensor, ...],
        cos: torch.Tensor,
        sin: torch.Tensor,
        slot_mapping: torch.Tensor,
        is_prefill: bool,
    ) -> torch.Tensor:
        c4 = a.compress_ratio == 4  # the indexer's block comes later on the same stream: its join covers this one
        runtime.record("prolog_fork")
        with runtime.stream(AUX):
            runtime.wait("prolog_fork")
            if not c4:
                runtime.record_stream(x, AUX)
            _kv_half(a, x, cos, sin, caches[1], slot_mapping)
            if not c4:
                runtime.record("prolog_join")
        q, qr, qr_scale = _query(a, x, cos, sin, is_prefill)
        topk = None
        if c4:
            topk = self._indexer(a, x, qr, qr_scale, caches, cos, sin)
        else:
            runtime.wait("prolog_join")
        o = sparse_attn(
            q,
            caches[1],
            a.attn_sink,
            a.softmax_scale,
            cmp_kv=caches[0] if topk is not None else None,
            cmp_sparse_indices=topk,
        )
        inplace_partial_rotary_mul(o.unsqueeze(1), cos, -sin, a.nope_head_dim)
        return a.wo(o.flatten(1))

    def forward(
        self,
        x: torch.Tensor,
        positions: torch.Tensor,
        kv_caches: tuple[tuple[torch.Tensor, ...], ...],
        slot_mapping: torch.Tensor,
        is_prefill: bool = False,
    ) -> torch.Tensor:
        m = self.m
        freqs = positions.unsqueeze(-1).float() * m.inv_freq
        cos, sin = freqs.cos().repeat(1, 2), freqs.sin().repeat(1, 2)
        runtime.record_stream(slot_mapping, AUX)  # every layer's scatter reads it there, the last one after main's
        for layer, caches in zip(m.layers, kv_caches):
            x = x + self._attention(layer.attn, layer.attn_norm(x), caches, cos, sin, slot_mapping, is_prefill)
            x = x + layer.ffn(layer.ffn_norm(x))
        return x
