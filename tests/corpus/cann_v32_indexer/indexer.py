"""The DeepSeek-V3.2 indexer in decode, with its query and head-weight branches on two side streams.

Shaped after ``Indexer.prefill_decode_ascendc`` in cann-recipes-infer
``models/deepseek-v3.2-exp/models/indexer.py`` (streams "22" and "33", events made
once at module level, ``npu_record_tagged_stream`` on the inputs the side streams
read) and sglang's ``Indexer.forward_npu`` (``python/sglang/srt/layers/attention/nsa/nsa_indexer.py``,
whose head gate folds the query's quantization scale into the weights). The query
branch (``wq_b`` with an optional per-token scale, RoPE, int8 quantization) runs on
``STREAM_INDEXER_PROLOG``; the head-weight projection runs on ``STREAM_INDEXER_WEIGHT``
and consumes the query scale made on the other side stream; the key branch stays on
the main stream; the top-k over the indexer scores joins them.

Idioms: side_to_side (``q_scale``: made on "22", read on "33"), module_constants (stream
tags), optional_star_static (``pertoken_scale=`` from a dict), container_returns
(a tuple of tensors), non_tensor_args (``multi_stream: bool``, ``is_prefill``, a dict).
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import keep_output, on_stream

STREAM_INDEXER_PROLOG = "22"
STREAM_INDEXER_WEIGHT = "33"


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Stand-in for ``npu_dynamic_quant``: symmetric int8 values (kept in float) and their scale."""
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-6) / 127
    return torch.round(x / scale), scale


class Indexer(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, heads: int, head_dim: int, rope_dim: int, index_topk: int,
                 multistream: bool = True) -> None:
        super().__init__()
        self.enable_multi_streams = multistream
        self.n_heads, self.head_dim, self.rope_head_dim, self.index_topk = heads, head_dim, rope_dim, index_topk
        self.softmax_scale = head_dim**-0.5
        self.wq_b = nn.Linear(q_lora_rank, heads * head_dim, bias=False)
        self.wk = nn.Linear(hidden, head_dim, bias=False)
        self.weights_proj = nn.Linear(hidden, heads, bias=False)
        self.k_norm = nn.LayerNorm(head_dim)

    @on_stream(STREAM_INDEXER_PROLOG, when="multi_stream")
    @keep_output
    def query_branch(self, qr: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, multi_stream: bool,
                     pertoken_scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        q_b = self.wq_b(qr)
        if pertoken_scale is not None:
            q_b = q_b * pertoken_scale
        q = q_b.view(-1, self.n_heads, self.head_dim)
        q_pe, q_nope = q.split([self.rope_head_dim, self.head_dim - self.rope_head_dim], dim=-1)
        q = torch.cat([rotate(q_pe, cos.unsqueeze(1), sin.unsqueeze(1)), q_nope], dim=-1)
        return quantize(q)

    @on_stream(STREAM_INDEXER_WEIGHT, when="multi_stream")
    @keep_output
    def head_weights(self, x: torch.Tensor, q_scale: torch.Tensor, multi_stream: bool) -> torch.Tensor:
        weights = self.weights_proj(x) * self.n_heads**-0.5
        return weights.unsqueeze(-1) * q_scale * self.softmax_scale

    def key_branch(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        k = self.k_norm(self.wk(x))
        k_pe, k_nope = k.split([self.rope_head_dim, self.head_dim - self.rope_head_dim], dim=-1)
        return quantize(torch.cat([rotate(k_pe, cos, sin), k_nope], dim=-1))

    def forward(self, x: torch.Tensor, qr: torch.Tensor, cos_sin: tuple[torch.Tensor, torch.Tensor],
                key_cache: torch.Tensor, key_scale_cache: torch.Tensor, slot_mapping: torch.Tensor, is_prefill: bool,
                c8_input_dict: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        cos, sin = cos_sin
        multi_stream = self.enable_multi_streams and not is_prefill
        q, q_scale = self.query_branch(qr, cos, sin, multi_stream, pertoken_scale=c8_input_dict.get("pertoken_scale"))
        weights = self.head_weights(x, q_scale, multi_stream)
        k, k_scale = self.key_branch(x, cos, sin)
        key_cache.index_copy_(0, slot_mapping, k)
        key_scale_cache.index_copy_(0, slot_mapping, k_scale)
        scores = torch.einsum("tnd,sd->tns", q, key_cache) * key_scale_cache.squeeze(-1)
        scores = (scores.relu() * weights).sum(dim=1)
        topk = scores.topk(self.index_topk, dim=-1)
        return topk.values, topk.indices
