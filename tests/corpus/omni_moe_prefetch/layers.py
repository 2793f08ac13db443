"""The decoder layers around omni-infer's MoE decode (no streams): attention, the layer that adds the MoE's two
outputs, and the model loop that hands each layer its successor's attention weights to prefetch.

After omni-infer ``omni/models/deepseek/deepseek_v3.py``: ``DeepseekDecoderLayer.forward``
(``hidden_states[0] + hidden_states[1]`` when the MoE returns a tuple) and the
model loop (``next_attention_weights``: the next layer's ``q_a_proj``, ``q_b_proj``
and ``W_UK`` weights, or a dict of ``None`` for the last layer). The attention is a
small CPU stand-in with the weights upstream prefetches. ``Model`` takes the MoE
class, so the decorated model and its twin share these modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

import torch
from torch import nn

__all__ = ["Attention", "DecoderLayer", "Model"]

WEIGHT_NAMES = ("q_a_proj_weight", "kv_a_proj_with_mqa_weight", "q_b_proj_weight", "W_UK")


class Attention(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, qk_dim: int, kv_lora_rank: int) -> None:
        super().__init__()
        self.q_a_proj = nn.Linear(hidden, q_lora_rank, bias=False)
        self.q_b_proj = nn.Linear(q_lora_rank, qk_dim, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(hidden, kv_lora_rank, bias=False)
        self.W_UK = nn.Parameter(torch.randn(qk_dim, kv_lora_rank) * qk_dim**-0.5)
        self.o_proj = nn.Linear(kv_lora_rank, hidden, bias=False)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q = self.q_b_proj(self.q_a_proj(hidden_states)) @ self.W_UK
        kv = self.kv_a_proj_with_mqa(hidden_states)
        return self.o_proj((q @ kv.T * kv.shape[-1] ** -0.5).softmax(dim=-1) @ kv)


class DecoderLayer(nn.Module):
    def __init__(self, hidden: int, attention: dict[str, int], mlp: nn.Module) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.self_attn = Attention(hidden, **attention)
        self.post_attention_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.mlp = mlp

    def forward(self, hidden_states: torch.Tensor, residual: Optional[torch.Tensor],
                next_attention_weights: Optional[dict] = None) -> tuple[torch.Tensor, torch.Tensor]:
        residual = hidden_states if residual is None else hidden_states + residual
        hidden_states = self.self_attn(self.input_layernorm(residual))
        residual = hidden_states + residual
        hidden_states, residual = self.mlp(self.post_attention_layernorm(residual), residual, next_attention_weights)
        if isinstance(hidden_states, (tuple, list)):
            hidden_states = hidden_states[0] + hidden_states[1]
        return hidden_states, residual


class Model(nn.Module):
    def __init__(self, hidden: int, attention: dict[str, int], layers: int, mlp: Callable[[], nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(hidden, attention, mlp()) for _ in range(layers))
        self.norm = nn.RMSNorm(hidden, eps=1e-6)

    def _next_attention_weights(self, i: int) -> dict[str, Optional[torch.Tensor]]:
        if i + 1 == len(self.layers):
            return dict.fromkeys(WEIGHT_NAMES)
        attn = self.layers[i + 1].self_attn
        return dict(zip(WEIGHT_NAMES, (attn.q_a_proj.weight, attn.kv_a_proj_with_mqa.weight, attn.q_b_proj.weight,
                                       attn.W_UK)))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        residual = None
        for i, layer in enumerate(self.layers):
            hidden_states, residual = layer(hidden_states, residual, self._next_attention_weights(i))
        return self.norm(hidden_states + residual)
