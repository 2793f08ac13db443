"""The parameters of DeepSeek-V4's decode attention and layers, shared by the decorated model and its twin.

Names follow cann-recipes-infer ``models/deepseek_v4/models/modeling_deepseek.py``
(``Attention``: ``wq_a``, ``q_norm``, ``wq_b``, ``q_b_norm``, ``wkv``, ``kv_norm``,
``compressor``, ``indexer``, ``wo``) and ``models/deepseek_v4/models/modules/indexer.py``
(``Indexer``: ``weights_proj``, ``compressor``, ``wq_b``, the Hadamard matrix). A
layer's ``compress_ratio`` (``config.compress_ratios[layer_idx]``) decides what it
has: a compressor when it is above 1, an indexer when it is 4.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from .layers import Compressor, QuantLinear, RMSNorm, hadamard

__all__ = ["AttentionWeights", "IndexerWeights", "LayerWeights", "Shape"]

Shape = dict[str, int]


class IndexerWeights(nn.Module):
    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.n_heads, self.head_dim, self.index_topk = shape["index_heads"], shape["index_dim"], shape["index_topk"]
        self.rope_dim, self.softmax_scale = shape["rope_dim"], shape["index_dim"] ** -0.5
        self.weights_proj = nn.Linear(shape["hidden"], self.n_heads, bias=False)
        self.compressor = Compressor(shape["hidden"], self.head_dim, 4)
        self.wq_b = QuantLinear(shape["q_lora_rank"], self.n_heads * self.head_dim)
        self.register_buffer("hadamard_matrix", hadamard(self.head_dim), persistent=False)


class AttentionWeights(nn.Module):
    def __init__(self, shape: Shape, compress_ratio: int, indexer: Callable[[Shape], nn.Module]) -> None:
        super().__init__()
        hidden, heads, self.head_dim = shape["hidden"], shape["heads"], shape["head_dim"]
        self.compress_ratio, self.num_heads_per_rank, self.rope_dim = compress_ratio, heads, shape["rope_dim"]
        self.wq_a = nn.Linear(hidden, shape["q_lora_rank"], bias=False)
        self.q_norm = RMSNorm(shape["q_lora_rank"])
        self.wq_b = QuantLinear(shape["q_lora_rank"], heads * self.head_dim)
        self.q_b_norm = RMSNorm(self.head_dim)
        self.wkv = nn.Linear(hidden, self.head_dim, bias=False)
        self.kv_norm = RMSNorm(self.head_dim)
        self.wo = nn.Linear(heads * self.head_dim, hidden, bias=False)
        if compress_ratio > 1:
            self.compressor = Compressor(hidden, self.head_dim, compress_ratio)
        if compress_ratio == 4:
            self.indexer = indexer(shape)


class LayerWeights(nn.Module):
    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(shape["hidden"])
        self.ffn_norm = RMSNorm(shape["hidden"])
        self.w1 = nn.Linear(shape["hidden"], 2 * shape["inter"], bias=False)
        self.w2 = nn.Linear(shape["inter"], shape["hidden"], bias=False)

    def ffn(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.w1(x).chunk(2, dim=-1)
        return self.w2(nn.functional.silu(gate) * up)
