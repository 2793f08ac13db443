"""DeepSeek-V4's indexer in vllm-ascend: its key cache updates and its weights projection on the DSA overlap stream.

Shaped after ``DeepseekV4Indexer.forward``,
``_cv_compute_query_and_update_cache_multistream`` and ``_select_topk_multistream``
in vllm-ascend ``vllm_ascend/models/deepseek_v4/indexer.py``, on the stream of
``dsv4_dsa_overlap_stream()`` (``vllm_ascend/attention/dsa_v1.py``), the one the
attention's MLA prolog uses (``dsa.py``):

- Part0 on main: ``qr`` quantized, the indexer's compressor (its state cache written
  in place), the Hadamard rotation of the compressed keys.
- Part1: the overlap stream waits for the main stream (upstream's ``e_kv_ready``) and
  quantizes the keys, writing them into the indexer's key cache in place
  (``quantize_key_and_update_cache``), while main runs the ``wq_b`` matmul and the
  query's rotary embedding (in place).
- Part3: the overlap stream writes the key scales into the scale cache
  (``update_scale_cache``, after upstream's ``e_rope_done``) while main runs the
  Hadamard matmul; upstream waits for the overlap stream after each part
  (``main_stream.wait_stream(aux_stream)``); nothing main does there reads what the
  overlap stream writes, so these are ordering edges, not data, and are left out.
- ``_select_topk_multistream``: ``weights_proj`` on the overlap stream
  (``weights_proj_start``/``weights_proj_done``) while main quantizes the query and
  runs the attention's compressed-KV scatter (a callable of the caller, passed in);
  then the top-k selection reads the projected weights and both caches the overlap
  stream wrote.

Upstream's ``overlap_plan.aux_stream is not None`` is ``self.multistream_dsv4_dsa_overlap``
here (``when=``; false: every call stays on the main stream). A batch whose compressor
yields no rows (``kv.numel() == 0``) skips the cache updates (``kv = None``), as upstream.

Idioms: side_cache_write (two caches written in place on the overlap stream, read on
main by the top-k), side_to_side (``kv_scale`` made by one overlap call, read by the
next), container_returns (tuples unpacked), non_tensor_args (a tuple of caches, the
overlap plan of callables, a lambda), module_constants (the stream tag).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from npudsl import on_stream

from .layers import (dynamic_quant, hadamard_linear, hadamard_scale, inplace_partial_rotary_mul, quantize_key_and_update_cache,
                     select_topk, update_scale_cache)
from .weights import IndexerWeights, Shape

DSV4_DSA_OVERLAP_STREAM = "dsv4_dsa_overlap"


@dataclass(frozen=True)
class IndexerOverlapPlan:
    """Main-attention compressor work scheduled around the indexer's selection."""

    compute_attention_compressed_kv: Callable[[], tuple[torch.Tensor, torch.Tensor]]
    scatter_attention_compressed_kv: Callable[[torch.Tensor, torch.Tensor], None]


class DeepseekV4Indexer(IndexerWeights):
    def __init__(self, shape: Shape, multistream: bool = True) -> None:
        super().__init__(shape)
        self.multistream_dsv4_dsa_overlap = multistream

    @on_stream(DSV4_DSA_OVERLAP_STREAM, when="self.multistream_dsv4_dsa_overlap")
    def _quantize_key_and_update_cache(self, key: torch.Tensor, key_cache: torch.Tensor,
                                       slot_mapping: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return quantize_key_and_update_cache(key, key_cache, slot_mapping)

    @on_stream(DSV4_DSA_OVERLAP_STREAM, when="self.multistream_dsv4_dsa_overlap")
    def _update_scale_cache(self, key_scale: torch.Tensor, scale_cache: torch.Tensor,
                            slot_mapping: torch.Tensor) -> None:
        update_scale_cache(key_scale, scale_cache, slot_mapping)

    @on_stream(DSV4_DSA_OVERLAP_STREAM, when="self.multistream_dsv4_dsa_overlap")
    def _weights_proj(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.weights_proj(hidden_states)

    def forward(self, hidden_states: torch.Tensor, qr: torch.Tensor, kv_cache: tuple[torch.Tensor, ...],
                cos: torch.Tensor, sin: torch.Tensor, overlap_plan: IndexerOverlapPlan,
                qr_pertoken_scale: torch.Tensor | None = None) -> torch.Tensor:
        indexer_q = self._cv_compute_query_and_update_cache(hidden_states, qr, kv_cache, cos, sin, qr_pertoken_scale)
        compressed_kv, compress_slot_mapping = overlap_plan.compute_attention_compressed_kv()
        return self._select_topk(
            hidden_states, indexer_q, kv_cache,
            lambda: overlap_plan.scatter_attention_compressed_kv(compressed_kv, compress_slot_mapping),
        )

    def _cv_compute_query_and_update_cache(self, hidden_states: torch.Tensor, qr: torch.Tensor,
                                           kv_cache: tuple[torch.Tensor, ...], cos: torch.Tensor, sin: torch.Tensor,
                                           qr_pertoken_scale: torch.Tensor | None = None) -> torch.Tensor:
        _, _, _, indexer_state_cache, indexer_k_cache, indexer_scale_cache = kv_cache
        # Part0 on main: qr quantized, the compressor, the Hadamard rotation of its keys
        if qr_pertoken_scale is not None:
            qr_quant_ready, qr_scale_ready = qr, qr_pertoken_scale
        else:
            qr_quant_ready, qr_scale_ready = self.cv_wq_b.quantize(qr)
        kv, slot_mapping_indexer = self.compressor(hidden_states, indexer_state_cache)
        if kv.numel() == 0:
            kv = None
        else:
            kv = kv @ self.hadamard
        # Part1: kv quantized and scattered into the key cache (overlap) || the wq_b matmul and rope (main)
        if kv is not None:
            kv, kv_scale = self._quantize_key_and_update_cache(kv, indexer_k_cache, slot_mapping_indexer)
        q = self.cv_wq_b.matmul(qr_quant_ready, qr_scale_ready)
        q = q.view(-1, self.n_heads, self.head_dim)
        inplace_partial_rotary_mul(q.unsqueeze(1), cos, sin, self.head_dim - self.rope_head_dim)
        # Part3: the key scales scattered (overlap) || the Hadamard matmul (main)
        if kv is not None and kv_scale is not None:
            self._update_scale_cache(kv_scale, indexer_scale_cache, slot_mapping_indexer)
        hidden_size = q.size(-1)
        q_linear, q_shape, q_dim = hadamard_linear(q, self.hadamard)
        return hadamard_scale(q_linear, q_shape, q_dim, scale=hidden_size**-0.5)

    def _select_topk(self, hidden_states: torch.Tensor, indexer_q: torch.Tensor, kv_cache: tuple[torch.Tensor, ...],
                     scatter_attention_compressed_kv: Callable[[], None]) -> torch.Tensor:
        weights_proj_output = self._weights_proj(hidden_states)
        q_quant, q_scale = dynamic_quant(indexer_q)
        scatter_attention_compressed_kv()
        _, _, _, _, indexer_k_cache, indexer_scale_cache = kv_cache
        weights = weights_proj_output * (self.softmax_scale * self.n_heads**-0.5)
        return select_topk(q_quant, weights, q_scale, indexer_k_cache, indexer_scale_cache, self.index_topk)
