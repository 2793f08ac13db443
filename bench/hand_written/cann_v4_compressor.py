"""DeepSeek-V4 decode attention by hand: four side streams, which of them a layer uses set by its compress ratio.

Per forward, the kernel metadata on "metadata_stream" after one fork (it reads the
caller's ``actual_seq_k``), joined once before the first layer. Per layer, the KV
branch on "mla_stream" after one fork (``wkv``, the user event ``wkv_done`` that
``wq_b`` waits for, the norm and the in-place rotary at 8/16 cores), joined before
the window cache is written. A c128a or c4a layer then forks once more, at one
point for both side streams: the compressor on "compressor_stream" (16/32 cores)
writes the compressed cache in place, and in a c4a layer the indexer's query runs
on "indexer_stream" (8/16) while main computes the head weights and the indexer's
own compressed keys (16/32); main joins the query before the lightning indexer and
the compressor before the attention kernel. No ``record_stream``: every tensor a
side stream reads is held by a frame that outlives the join, and what a side
stream makes is next allocated on that stream after the next fork, itself after
main's last use. A model built with ``multistream=False`` runs on one stream.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from corpus.cann_v4_compressor.layers import (dynamic_quant, inplace_partial_rotary_mul, lightning_indexer,
                                              sparse_attention, update_win_kv)
from npudsl import runtime

SOURCE = "corpus:cann_v4_compressor"
USER_EVENTS = ("wkv_done",)


def _limited(aic: int, aiv: int) -> contextlib.AbstractContextManager[None]:
    return runtime.core_limit(aic, aiv)


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _prolog(self, a: nn.Module, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                slot_mapping: torch.Tensor, win_kv: torch.Tensor) -> tuple[torch.Tensor, ...]:
        qr, qr_scale = dynamic_quant(a.q_norm(a.wq_a(x)))
        runtime.record("mla_fork")
        with runtime.stream("mla_stream"):
            runtime.wait("mla_fork")
            kv = a.wkv(x)
            runtime.record("wkv_done")
            with _limited(8, 16):
                kv = a.kv_norm(kv)
                inplace_partial_rotary_mul(kv, cos, sin, a.rope_dim)
            runtime.record("mla_join")
        runtime.wait("wkv_done")
        q = a.wq_b(qr, qr_scale).unflatten(-1, (a.num_heads_per_rank, a.head_dim))
        with _limited(8, 16) if a.compress_ratio > 1 else contextlib.nullcontext():
            q = a.q_b_norm(q)
            inplace_partial_rotary_mul(q, cos, sin, a.rope_dim)
        runtime.wait("mla_join")
        update_win_kv(kv, slot_mapping, win_kv)
        return q, qr, qr_scale

    def _indexer(self, ix: nn.Module, x: torch.Tensor, qr: torch.Tensor, qr_scale: torch.Tensor, cos: torch.Tensor,
                 sin: torch.Tensor, li_cache: torch.Tensor, valid: torch.Tensor, keep_rope: bool) -> torch.Tensor:
        with runtime.stream("indexer_stream"), _limited(8, 16):
            runtime.wait("side_fork")
            runtime.record_stream(qr, "indexer_stream")
            runtime.record_stream(qr_scale, "indexer_stream")
            if keep_rope:  # record_stream holds until the free: once covers the later layers' reads too
                runtime.record_stream(cos, "indexer_stream")
                runtime.record_stream(sin, "indexer_stream")
            q = ix.wq_b(qr, qr_scale).view(-1, ix.n_heads, ix.head_dim)
            inplace_partial_rotary_mul(q, cos, sin, ix.rope_dim)
            q, q_scale = dynamic_quant(q @ ix.hadamard_matrix)
            runtime.record("indexer_join")
        with _limited(16, 32):
            weights = ix.weights_proj(x) * (ix.softmax_scale * ix.n_heads**-0.5)
            ix.compressor(x, li_cache)
        runtime.wait("indexer_join")
        return lightning_indexer(q, q_scale, weights, li_cache, valid, ix.index_topk)

    def _attention(self, a: nn.Module, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                   slot_mapping: torch.Tensor, metadata: dict[str, torch.Tensor],
                   cache: tuple[torch.Tensor, torch.Tensor, torch.Tensor], keep_rope: bool) -> torch.Tensor:
        win_kv, cmp_kv, li_cache = cache
        q, qr, qr_scale = self._prolog(a, x, cos, sin, slot_mapping, win_kv)
        topk_idxs = None
        if a.compress_ratio > 1:
            runtime.record("side_fork")
            with runtime.stream("compressor_stream"), _limited(16, 32):
                runtime.wait("side_fork")
                if a.compress_ratio == 4:  # main allocates before the join (the indexer's weights)
                    runtime.record_stream(x, "compressor_stream")
                a.compressor(x, cmp_kv)
                runtime.record("compressor_join")
        if a.compress_ratio == 4:
            topk_idxs = self._indexer(a.indexer, x, qr, qr_scale, cos, sin, li_cache, metadata["li_metadata"],
                                      keep_rope)
        if a.compress_ratio > 1:
            runtime.wait("compressor_join")
        o = sparse_attention(q, win_kv, cmp_kv if a.compress_ratio > 1 else None, topk_idxs,
                             metadata[f"c{a.compress_ratio}a_metadata"])
        return a.wo(o)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, slot_mapping: torch.Tensor,
                actual_seq_k: torch.Tensor,
                kv_caches: tuple[tuple[torch.Tensor, torch.Tensor, torch.Tensor], ...]) -> torch.Tensor:
        m = self.m
        runtime.record("metadata_fork")
        with runtime.stream("metadata_stream"):
            runtime.wait("metadata_fork")
            runtime.record_stream(actual_seq_k, "metadata_stream")
            metadata = {f"c{r}a_metadata": ((actual_seq_k + r - 1) // r).clamp(max=m.cmp_slots) for r in (4, 128)}
            metadata["c1a_metadata"] = actual_seq_k.clone()
            metadata["li_metadata"] = metadata["c4a_metadata"].clone()
            runtime.record("metadata_join")
        freqs = positions.to(torch.float32).unsqueeze(-1) * 10000 ** -(
            torch.arange(0, m.rope_dim, 2, dtype=torch.float32) / m.rope_dim)
        cos, sin = freqs.cos(), freqs.sin()
        runtime.wait("metadata_join")
        first_c4 = next(i for i, layer in enumerate(m.layers) if layer.attn.compress_ratio == 4)
        for i, (layer, cache) in enumerate(zip(m.layers, kv_caches)):
            x = x + self._attention(layer.attn, layer.attn_norm(x), cos, sin, slot_mapping, metadata, cache,
                                    i == first_c4)
            x = x + layer.ffn(layer.ffn_norm(x))
        return m.norm(x)
