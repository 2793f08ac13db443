"""The parameters of DeepSeek-V4's DSA attention and its indexer, shared by the decorated model and its twin.

Names follow vllm-ascend ``vllm_ascend/attention/dsa_v1.py`` (``AscendDSAImpl``: ``wq_a``,
``q_norm``, ``wq_b``, ``wkv``, ``kv_norm``, the ``cv_*`` wrappers, ``attn_sink``,
``compressor``, ``indexer``) and ``vllm_ascend/models/deepseek_v4/indexer.py``
(``DeepseekV4Indexer``: ``wq_b``, ``weights_proj``, ``compressor``, the Hadamard
matrix). A layer's ``compress_ratio`` decides what it has: a compressor when it is
above 1, an indexer when it is 4.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from .layers import Compressor, CVLinearWrapper, QuantLinear, RMSNorm, hadamard

__all__ = ["AttentionWeights", "IndexerWeights", "LayerWeights", "Shape"]

Shape = dict[str, int]


class IndexerWeights(nn.Module):
    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.n_heads, self.head_dim, self.index_topk = shape["index_heads"], shape["index_dim"], shape["index_topk"]
        self.rope_head_dim, self.softmax_scale = shape["rope_dim"], shape["index_dim"] ** -0.5
        self.wq_b = QuantLinear(shape["q_lora_rank"], self.n_heads * self.head_dim)
        self.cv_wq_b = CVLinearWrapper(self.wq_b)
        self.weights_proj = nn.Linear(shape["hidden"], self.n_heads, bias=False)
        self.compressor = Compressor(shape["hidden"], self.head_dim, 4)
        self.register_buffer("hadamard", hadamard(self.head_dim), persistent=False)


class AttentionWeights(nn.Module):
    def __init__(self, shape: Shape, compress_ratio: int, indexer: Callable[[Shape], nn.Module]) -> None:
        super().__init__()
        hidden, self.n_local_heads, self.head_dim = shape["hidden"], shape["heads"], shape["head_dim"]
        self.compress_ratio, self.rope_head_dim = compress_ratio, shape["rope_dim"]
        self.nope_head_dim, self.softmax_scale = self.head_dim - self.rope_head_dim, self.head_dim**-0.5
        self.wq_a = QuantLinear(hidden, shape["q_lora_rank"])
        self.q_norm = RMSNorm(shape["q_lora_rank"])
        self.wq_b = QuantLinear(shape["q_lora_rank"], self.n_local_heads * self.head_dim)
        self.wkv = QuantLinear(hidden, self.head_dim)
        self.kv_norm = RMSNorm(self.head_dim)
        self.cv_wq_a, self.cv_wkv, self.cv_wq_b = CVLinearWrapper(self.wq_a), CVLinearWrapper(self.wkv), \
            CVLinearWrapper(self.wq_b)
        self.wo = nn.Linear(self.n_local_heads * self.head_dim, hidden, bias=False)
        self.attn_sink = nn.Parameter(torch.randn(self.n_local_heads))
        if compress_ratio > 1:
            self.compressor = Compressor(hidden, self.head_dim, compress_ratio)
        if compress_ratio == 4:
            self.indexer = indexer(shape)


class LayerWeights(nn.Module):
    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(shape["hidden"])
        self.ffn_norm = RMSNorm(shape["hidden"])
        self.w13 = nn.Linear(shape["hidden"], 2 * shape["inter"], bias=False)
        self.w2 = nn.Linear(shape["inter"], shape["hidden"], bias=False)

    def ffn(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.w13(x).chunk(2, dim=-1)
        return self.w2(nn.functional.silu(gate) * up)
