"""GLM-4 MoE decoder layers: attention writing the KV cache in place, then a dense MLP or the sparse MoE block.

Shaped after ``Glm4MoeDecoderLayer`` and ``Glm4MoeModel`` in sglang
``python/sglang/srt/models/glm4_moe.py``: the first ``first_k_dense_replace``
layers use a dense MLP, the others ``Glm4MoeSparseMoeBlock`` (``moe.py``, where
the streams are); each layer norms with the residual before attention and before
its MLP. ``is_extend`` stands for ``forward_batch.forward_mode.is_extend()``.

Idioms: non_tensor_args (``is_extend: bool``, a KV cache tensor written in place
through a per-layer view).
"""

from __future__ import annotations

import torch
from torch import nn

from .layers import MLP, Attention, RMSNorm
from .moe import Glm4MoeSparseMoeBlock


class Glm4MoeDecoderLayer(nn.Module):
    def __init__(self, layer_id: int, hidden: int, inter: int, moe_inter: int, shared_experts: int, experts: int,
                 top_k: int, n_group: int, topk_group: int, routed_scaling_factor: float, first_k_dense: int,
                 multistream: bool) -> None:
        super().__init__()
        self.layer_id = layer_id
        self.is_layer_sparse = layer_id >= first_k_dense
        self.self_attn = Attention(hidden)
        self.input_layernorm = RMSNorm(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        if self.is_layer_sparse:
            self.mlp = Glm4MoeSparseMoeBlock(hidden, moe_inter, shared_experts, experts, top_k, n_group, topk_group,
                                             routed_scaling_factor, multistream)
        else:
            self.mlp = MLP(hidden, inter)

    def forward(self, hidden_states: torch.Tensor, residual: torch.Tensor | None, kv_cache: torch.Tensor,
                out_cache_loc: torch.Tensor, is_extend: bool) -> tuple[torch.Tensor, torch.Tensor]:
        hidden_states, residual = self.input_layernorm(hidden_states, residual)
        hidden_states = self.self_attn(hidden_states, kv_cache[self.layer_id], out_cache_loc)
        hidden_states, residual = self.post_attention_layernorm(hidden_states, residual)
        if self.is_layer_sparse:
            return self.mlp(hidden_states, is_extend), residual
        return self.mlp(hidden_states), residual


class Glm4MoeModel(nn.Module):
    def __init__(self, hidden: int, inter: int, moe_inter: int, shared_experts: int, experts: int, top_k: int,
                 n_group: int, topk_group: int, routed_scaling_factor: float, layers: int, first_k_dense: int,
                 multistream: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            Glm4MoeDecoderLayer(i, hidden, inter, moe_inter, shared_experts, experts, top_k, n_group, topk_group,
                                routed_scaling_factor, first_k_dense, multistream)
            for i in range(layers)
        )
        self.norm = RMSNorm(hidden)

    def forward(self, hidden_states: torch.Tensor, kv_cache: torch.Tensor, out_cache_loc: torch.Tensor,
                is_extend: bool = True) -> torch.Tensor:
        residual = None
        for layer in self.layers:
            hidden_states, residual = layer(hidden_states, residual, kv_cache, out_cache_loc, is_extend)
        return self.norm(hidden_states, residual)[0]
