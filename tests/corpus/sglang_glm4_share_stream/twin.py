"""Single-stream twin of :mod:`corpus.sglang_glm4_share_stream` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn

from .layers import MLP, Attention, Gate, RMSNorm, RoutedExperts, grouped_topk


class _Moe(nn.Module):
    def __init__(self, hidden: int, moe_inter: int, shared_experts: int, experts: int) -> None:
        super().__init__()
        self.gate = Gate(hidden, experts)
        self.experts = RoutedExperts(hidden, moe_inter, experts)
        self.shared_experts = MLP(hidden, moe_inter * shared_experts)


class _Layer(nn.Module):
    def __init__(self, hidden: int, inter: int, moe_inter: int, shared_experts: int, experts: int,
                 sparse: bool) -> None:
        super().__init__()
        self.self_attn = Attention(hidden)
        self.input_layernorm = RMSNorm(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = _Moe(hidden, moe_inter, shared_experts, experts) if sparse else MLP(hidden, inter)


class Glm4MoeModel(nn.Module):
    def __init__(self, hidden: int, inter: int, moe_inter: int, shared_experts: int, experts: int, top_k: int,
                 n_group: int, topk_group: int, routed_scaling_factor: float, layers: int,
                 first_k_dense: int) -> None:
        super().__init__()
        self.top_k, self.n_group, self.topk_group, self.scale = top_k, n_group, topk_group, routed_scaling_factor
        self.layers = nn.ModuleList(
            _Layer(hidden, inter, moe_inter, shared_experts, experts, i >= first_k_dense) for i in range(layers)
        )
        self.norm = RMSNorm(hidden)

    def _moe(self, moe: _Moe, x: torch.Tensor) -> torch.Tensor:
        weights, ids = grouped_topk(moe.gate(x), moe.gate.e_score_correction_bias, self.top_k, self.n_group,
                                    self.topk_group)
        shared = moe.shared_experts(x)
        return shared.add_(moe.experts(x, weights, ids), alpha=self.scale)

    def forward(self, x: torch.Tensor, kv_cache: torch.Tensor, out_cache_loc: torch.Tensor,
                is_extend: bool = True) -> torch.Tensor:
        residual = None
        for i, layer in enumerate(self.layers):
            x, residual = layer.input_layernorm(x, residual)
            x, residual = layer.post_attention_layernorm(layer.self_attn(x, kv_cache[i], out_cache_loc), residual)
            x = self._moe(layer.mlp, x) if isinstance(layer.mlp, _Moe) else layer.mlp(x)
        return self.norm(x, residual)[0]
