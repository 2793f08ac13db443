"""Single-stream twin of :mod:`corpus.cann_r1_microbatch` (same parameter names, no npudsl).

A prefill batch is split in the same two micro-batches, each run through every layer
on its own (attention, then the dense MLP or the whole MoE), one after the other.
"""

from __future__ import annotations

import torch
from torch import nn

from .layers import MLP, Attention, RMSNorm, rotary
from .moe import DeepseekV3MoE


class _Layer(nn.Module):
    def __init__(self, hidden: int, inter: int, moe_inter: int, experts: int, top_k: int, moe: bool) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = Attention(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = DeepseekV3MoE(hidden, moe_inter, experts, top_k) if moe else MLP(hidden, inter)


class DeepseekV3Model(nn.Module):
    def __init__(self, vocab: int, hidden: int, inter: int, moe_inter: int, experts: int, top_k: int, layers: int,
                 first_k_dense_replace: int) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(
            _Layer(hidden, inter, moe_inter, experts, top_k, i >= first_k_dense_replace) for i in range(layers)
        )
        self.norm = RMSNorm(hidden)

    def run(self, input_ids: torch.Tensor, position_ids: torch.Tensor, kv_cache: torch.Tensor,
            slot_mapping: torch.Tensor, seq_lens: tuple[int, ...]) -> torch.Tensor:
        """Requests run together through every layer (one micro-batch, or the whole batch)."""
        x, residual = self.embed_tokens(input_ids), None
        cos_sin = rotary(position_ids, x.shape[-1])
        for i, layer in enumerate(self.layers):
            x, residual = layer.input_layernorm(x, residual)
            x = layer.self_attn(x, cos_sin, kv_cache[i], slot_mapping, seq_lens)
            x, residual = layer.post_attention_layernorm(x, residual)
            x = layer.mlp(x)
        return self.norm(x, residual)[0]

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor, kv_cache: torch.Tensor,
                slot_mapping: torch.Tensor, seq_lens: tuple[int, ...], is_prefill: bool = True) -> torch.Tensor:
        if not is_prefill:
            return self.run(input_ids, position_ids, kv_cache, slot_mapping, seq_lens)
        split = len(seq_lens) // 2
        cut = sum(seq_lens[:split])
        first = self.run(input_ids[:cut], position_ids[:cut], kv_cache, slot_mapping[:cut], seq_lens[:split])
        rest = self.run(input_ids[cut:], position_ids[cut:], kv_cache, slot_mapping[cut:], seq_lens[split:])
        return torch.cat([first, rest], dim=0)
