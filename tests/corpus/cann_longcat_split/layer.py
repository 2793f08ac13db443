"""LongCat-Flash decoder layers: two attention/MLP sub-layers on the main stream beside the shortcut MoE.

Shaped after ``LongcatFlashDecoderLayer.multi_stream_forward`` (cann-recipes-infer
``models/longcat_flash/models/modeling_longcat_flash.py``): after sub-layer 0, the
MoE goes to the side stream (see ``moe.py``) while sub-layer 1 (dense MLP 0,
attention 1, dense MLP 1) runs on the main stream limited to 16 cube / 32 vector
cores; the layer ends by adding the MoE output. Together the two halves never
use more than the 24/48 cores of one die. Attention is a tiny single-head stand-in.

Idioms: core_split (the main half: ``@core_limit(16, 32)`` on a method without a stream).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import core_limit

from .moe import LongcatFlashMoE


class AddRMSNorm(nn.Module):
    """``npu_add_rms_norm``: adds the residual, then normalizes; returns (normed, new residual)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        residual = x if residual is None else x + residual
        return F.rms_norm(residual, (residual.shape[-1],), self.weight, eps=1e-6), residual


class Attention(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.o_proj((q @ k.T * x.shape[-1] ** -0.5).softmax(dim=-1) @ v)


class MLP(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class LongcatFlashDecoderLayer(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, zero_experts: int, top_k: int,
                 multistream: bool) -> None:
        super().__init__()
        self.enable_multi_streams = multistream
        self.mlp = LongcatFlashMoE(hidden, inter, experts, zero_experts, top_k, multistream)
        self.self_attn = nn.ModuleList(Attention(hidden) for _ in range(2))
        self.mlps = nn.ModuleList(MLP(hidden, inter) for _ in range(2))
        self.input_layernorm = nn.ModuleList(AddRMSNorm(hidden) for _ in range(2))
        self.post_attention_layernorm = nn.ModuleList(AddRMSNorm(hidden) for _ in range(2))

    @core_limit(16, 32, when="self.enable_multi_streams")
    def dense_path(self, hidden_states: torch.Tensor, residual: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden_states = self.mlps[0](hidden_states)
        hidden_states, residual = self.input_layernorm[1](hidden_states, residual)
        hidden_states, residual = self.post_attention_layernorm[1](self.self_attn[1](hidden_states), residual)
        return self.mlps[1](hidden_states), residual

    def forward(self, hidden_states: torch.Tensor, residual: torch.Tensor | None, is_prefill: bool = False):
        hidden_states, residual = self.input_layernorm[0](hidden_states, residual)
        hidden_states = self.self_attn[0](hidden_states)
        hidden_states_norm, residual = self.post_attention_layernorm[0](hidden_states, residual)
        shortcut_mlp_output = self.mlp(hidden_states_norm, is_prefill)
        hidden_states, residual = self.dense_path(hidden_states_norm, residual)
        return hidden_states + shortcut_mlp_output, residual


class LongcatFlashModel(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, zero_experts: int, top_k: int, layers: int = 2,
                 multistream: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            LongcatFlashDecoderLayer(hidden, inter, experts, zero_experts, top_k, multistream) for _ in range(layers))
        self.norm = AddRMSNorm(hidden)

    def forward(self, hidden_states: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        residual = None
        for layer in self.layers:
            hidden_states, residual = layer(hidden_states, residual, is_prefill)
        return self.norm(hidden_states, residual)[0]
