"""DeepSeek-V4's decode attention: the KV branch on "mla_stream", the compressor on "compressor_stream".

Shaped after ``Attention.mla_prolog_decode`` and ``Attention.sparse_attn`` in
cann-recipes-infer ``models/deepseek_v4/models/modeling_deepseek.py`` (A3, decode,
``enable_multi_streams`` and ``enable_limit_core``):

- ``mla_prolog_decode``: ``wq_a`` and the norm with its dynamic quantization on
  main; on "mla_stream" the ``wkv`` matmul, then (at 8/16 cores; upstream: half the cube cores, 12/24) the
  KV norm and the rotary embedding applied to ``kv`` in place. Upstream records
  ``mla_events[1]`` after the ``wkv`` matmul and the main stream waits for it before
  ``wq_b`` ("ensure wkv matmul does not overlap with wq_a or wq_b"), an ordering edge
  without data: here ``@records("wkv_done")`` / ``@after("wkv_done")``. Main goes on
  with ``wq_b``, the query norm and rotary (at the cores the compressor leaves,
  8/16, in a layer whose compressor runs beside it), then joins the KV branch
  (``mla_events[2]``, with ``record_stream(kv, cur_stream)``) and writes ``kv``
  into the window cache in place ("update kv cache in default stream").
- ``sparse_attn``: in a layer whose ``compress_ratio`` is above 1 the compressor
  runs on "compressor_stream" at 16/32 cores (``cmpr_events[0]``, ``[1]``), writing
  the layer's compressed cache in place and returning nothing; a c4a layer runs the
  indexer (``indexer.py``, its own stream) meanwhile; the attention kernel reads
  the compressed cache after the join (upstream: ``wait_event(cmpr_events, 1)``
  "finish compressor before sfa"). The layer's compress ratio decides per layer
  which streams it uses: c1a none of these two, c128a the compressor, c4a the
  compressor and the indexer.

The KV branch runs at 8/16 cores here, not upstream's 12/24 (``total_aic_num // 2``), for GE: NPD302 reads
the target's schedule; with events the KV branch is joined in ``mla_prolog_decode`` before ``sparse_attn``
forks the compressor, so 12/24 beside its 16/32 passes, but GE orders streams by data alone and nothing orders
the compressor (it reads ``x`` and its cache; no op of ``sparse_attn`` runs before it, so it has no fork edge)
after the KV branch: it may start while that runs, 12 + 16 of the device's 24 cube cores, NPD302 on GE.

Idioms: core_split (8/16, 8/16, 16/32 per stream), per_layer_streams (``when='self.x'`` flags
set per layer from its compress ratio), module_constants, side_cache_write (the compressor's cache written in
place on its stream, read on main after the join), container_returns, non_tensor_args
(a tuple of caches, a dict of kernel metadata).
"""

from __future__ import annotations

import torch

from npudsl import after, core_limit, on_stream, records

from .indexer import Indexer
from .layers import dynamic_quant, inplace_partial_rotary_mul, sparse_attention, update_win_kv
from .weights import AttentionWeights

MLA_STREAM = "mla_stream"
COMPRESSOR_STREAM = "compressor_stream"
KV_AIC_NUM = 8  # upstream 12/24: see the docstring (NPD302 on GE)
KV_AIV_NUM = 16
QB_AIC_NUM = 8
QB_AIV_NUM = 16
CMPR_AIC_NUM = 16
CMPR_AIV_NUM = 32


class Attention(AttentionWeights):
    def __init__(self, shape: dict[str, int], compress_ratio: int, multistream: bool = True,
                 enable_limit_core: bool = True) -> None:
        super().__init__(shape, compress_ratio, lambda s: Indexer(s, multistream, enable_limit_core))
        self.enable_multi_streams = multistream
        self.enable_limit_core = enable_limit_core and multistream
        self.enable_compressor_parallel = multistream and (
            compress_ratio == 128 or (compress_ratio == 4 and enable_limit_core))
        self.limit_qb_core = self.enable_limit_core and self.enable_compressor_parallel

    @on_stream(MLA_STREAM, when="self.enable_multi_streams")
    @records("wkv_done", when="self.enable_multi_streams")
    def wkv_matmul(self, x: torch.Tensor) -> torch.Tensor:
        return self.wkv(x)

    @on_stream(MLA_STREAM, when="self.enable_multi_streams")
    @core_limit(KV_AIC_NUM, KV_AIV_NUM, when="self.enable_limit_core")
    def kv_norm_rope(self, kv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        kv = self.kv_norm(kv)
        inplace_partial_rotary_mul(kv, cos, sin, self.rope_dim)
        return kv

    @after("wkv_done", when="self.enable_multi_streams")
    def q_b_proj(self, qr: torch.Tensor, qr_scale: torch.Tensor) -> torch.Tensor:
        return self.wq_b(qr, dynamic_scale=qr_scale).unflatten(-1, (self.num_heads_per_rank, self.head_dim))

    @core_limit(QB_AIC_NUM, QB_AIV_NUM, when="self.limit_qb_core")
    def q_norm_rope(self, q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q = self.q_b_norm(q)
        inplace_partial_rotary_mul(q, cos, sin, self.rope_dim)
        return q

    def mla_prolog_decode(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, slot_mapping: torch.Tensor,
                          win_kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        qa = self.wq_a(x)
        qr, qr_scale = dynamic_quant(self.q_norm(qa))
        kv = self.wkv_matmul(x)
        kv = self.kv_norm_rope(kv, cos, sin)
        q = self.q_b_proj(qr, qr_scale)
        q = self.q_norm_rope(q, cos, sin)
        update_win_kv(kv, slot_mapping, win_kv)
        return q, qr, qr_scale, x

    @on_stream(COMPRESSOR_STREAM, when="self.enable_compressor_parallel")
    @core_limit(CMPR_AIC_NUM, CMPR_AIV_NUM, when="self.enable_limit_core")
    def compress(self, x: torch.Tensor, cmp_kv: torch.Tensor) -> None:
        self.compressor(x, cmp_kv)

    def sparse_attn(self, x: torch.Tensor, q: torch.Tensor, qr: torch.Tensor, qr_scale: torch.Tensor,
                    cos: torch.Tensor, sin: torch.Tensor, kernel_metadata: dict[str, torch.Tensor],
                    win_kv: torch.Tensor, cmp_kv: torch.Tensor, li_cache: torch.Tensor) -> torch.Tensor:
        if self.compress_ratio > 1:
            self.compress(x, cmp_kv)
        if self.compress_ratio == 4:
            topk_idxs = self.indexer(x, qr, qr_scale, cos, sin, li_cache, kernel_metadata["li_metadata"])
        else:
            topk_idxs = None
        metadata = kernel_metadata[f"c{self.compress_ratio}a_metadata"]
        return sparse_attention(q, win_kv, cmp_kv if self.compress_ratio > 1 else None, topk_idxs, metadata)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, slot_mapping: torch.Tensor,
                kernel_metadata: dict[str, torch.Tensor],
                layer_cache: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> torch.Tensor:
        win_kv, cmp_kv, li_cache = layer_cache
        q, qr, qr_scale, x = self.mla_prolog_decode(x, cos, sin, slot_mapping, win_kv)
        o = self.sparse_attn(x, q, qr, qr_scale, cos, sin, kernel_metadata, win_kv, cmp_kv, li_cache)
        return self.wo(o)
