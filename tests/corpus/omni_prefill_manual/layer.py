"""Prefill decoder layers combining :mod:`.attention` and :mod:`.moe`; the stream classes live in those files.

Shaped after the prefill path of omni-infer ``omni/models/deepseek/deepseek_v3_a2.py``.
Idioms: manual_pipeline (callers of the hand-ordered stream methods in other files).
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import PrefillMLA
from .collectives import rope
from .moe import PrefillMoE


class PrefillDecoderLayer(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, kv_lora_rank: int, heads: int, nope_dim: int, rope_dim: int,
                 v_dim: int, inter: int, experts: int, top_k: int, multistream: bool) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.self_attn = PrefillMLA(hidden, q_lora_rank, kv_lora_rank, heads, nope_dim, rope_dim, v_dim, multistream)
        self.post_attention_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.mlp = PrefillMoE(hidden, inter, experts, top_k, multistream)

    def forward(self, hidden_states, cos, sin, kv_cache, slot_mapping):
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states), cos, sin, kv_cache,
                                                       slot_mapping)
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class PrefillModel(nn.Module):
    def __init__(self, layers: int = 2, **shape) -> None:
        super().__init__()
        self.rope_dim = shape["rope_dim"]
        self.layers = nn.ModuleList(PrefillDecoderLayer(**shape) for _ in range(layers))

    def forward(self, hidden_states: torch.Tensor, positions: torch.Tensor,
                kv_caches: list[tuple[torch.Tensor, torch.Tensor]], slot_mapping: torch.Tensor) -> torch.Tensor:
        cos, sin = rope(positions, self.rope_dim)
        for layer, kv_cache in zip(self.layers, kv_caches):
            hidden_states = layer(hidden_states, cos, sin, kv_cache, slot_mapping)
        return hidden_states
