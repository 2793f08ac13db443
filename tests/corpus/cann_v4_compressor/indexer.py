"""DeepSeek-V4's lightning indexer (c4a layers): its query on "indexer_stream" at 8/16 cores, the rest on main.

Shaped after ``Indexer.forward`` in cann-recipes-infer
``models/deepseek_v4/models/modules/indexer.py`` (decode): on the main stream, at
16/32 cores (``cmpr_aic_num``), the head weights (``weights_proj``) and the
indexer's own compressor, which writes this step's compressed keys into the
indexer cache in place; on "indexer_stream", at the 8/16 cores left
(``rope_aic_num``), the query: ``wq_b`` of the quantized ``qr`` with its scale,
the rotary embedding in place, the Hadamard rotation, the dynamic quantization;
then, on main after the join (upstream's ``indexer_events[1]``, with
``record_stream(q, cur_stream)``), the lightning indexer kernel reads both.
Upstream records the fork (``indexer_events[0]``) in ``Attention.mla_prolog_decode``
right after ``wq_b``, before the main stream's weights and compressor are issued:
here the query is the first call, so its fork comes before them too. Upstream's
indexer stream also waits for the attention's compressor (``cmpr_events[1]``,
recorded in another class) before its quantization, an ordering edge without data
(to keep the two apart on the cores); it is not ported (a shared event, CONTRACT
section 1, which ``vllm_native_shared_expert`` covers).

Idioms: core_split (two core limits beside each other, one on a stream method, one on
a main-stream method), module_constants (the stream tag; the core counts in pairs,
``CMPR_AIC_NUM, CMPR_AIV_NUM = 16, 32``),
container_returns (the query and its scale as a tuple).
"""

from __future__ import annotations

import torch

from npudsl import core_limit, on_stream

from .layers import dynamic_quant, inplace_partial_rotary_mul, lightning_indexer
from .weights import IndexerWeights

INDEXER_STREAM = "indexer_stream"
CMPR_AIC_NUM, CMPR_AIV_NUM = 16, 32  # the indexer's weights and compressor on main
ROPE_AIC_NUM, ROPE_AIV_NUM = 8, 16  # its query on "indexer_stream": the cube cores left, 24 - 16


class Indexer(IndexerWeights):
    def __init__(self, shape: dict[str, int], multistream: bool = True, enable_limit_core: bool = True) -> None:
        super().__init__(shape)
        self.enable_multi_streams = multistream
        self.enable_limit_core = enable_limit_core and multistream

    @on_stream(INDEXER_STREAM, when="self.enable_multi_streams")
    @core_limit(ROPE_AIC_NUM, ROPE_AIV_NUM, when="self.enable_limit_core")
    def query(self, qr: torch.Tensor, qr_scale: torch.Tensor, cos: torch.Tensor,
              sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q = self.wq_b(qr, dynamic_scale=qr_scale).view(-1, self.n_heads, self.head_dim)
        inplace_partial_rotary_mul(q, cos, sin, self.rope_dim)
        q = q @ self.hadamard_matrix
        return dynamic_quant(q)

    @core_limit(CMPR_AIC_NUM, CMPR_AIV_NUM, when="self.enable_limit_core")
    def weights_and_compress(self, x: torch.Tensor, li_cache: torch.Tensor) -> torch.Tensor:
        weights = self.weights_proj(x) * (self.softmax_scale * self.n_heads**-0.5)
        self.compressor(x, li_cache)
        return weights

    def forward(self, x: torch.Tensor, qr: torch.Tensor, qr_scale: torch.Tensor, cos: torch.Tensor,
                sin: torch.Tensor, li_cache: torch.Tensor, li_metadata: torch.Tensor) -> torch.Tensor:
        q, q_scale = self.query(qr, qr_scale, cos, sin)
        weights = self.weights_and_compress(x, li_cache)
        return lightning_indexer(q, q_scale, weights, li_cache, li_metadata, self.index_topk)
