"""DeepSeek-V3.2 decoder layers; the MoE calls the shared-expert stream class defined in ``shared.py``.

Shaped after ``DeepseekV3MoE.forward`` and the decoder stack of cann-recipes-infer
``models/deepseek-v3.2-exp/models/modeling_deepseek.py``: multi-stream only in
decode, the shared experts absent on layers configured without them, the routed
experts on the main stream meanwhile. Attention is a tiny single-head stand-in.

Idioms: deep (``build(layers=N)``), if_call (the stream call under
``if self.n_shared_experts > 0:``, an early ``return`` without it).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .shared import SharedExperts


class DeepseekV3MoE(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, n_shared_experts: int,
                 multistream: bool) -> None:
        super().__init__()
        self.top_k, self.n_shared_experts, self.enable_multi_streams = top_k, n_shared_experts, multistream
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)
        if n_shared_experts > 0:
            self.shared_experts = SharedExperts(hidden, inter * n_shared_experts, multistream)

    def forward(self, hidden_states: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        topk_weight, topk_idx = self.gate(hidden_states).sigmoid().topk(self.top_k, dim=-1)
        if self.n_shared_experts > 0:
            hidden_states_share = self.shared_experts(hidden_states.view(-1, hidden_states.shape[-1]))
        mask = hidden_states.new_zeros(hidden_states.shape[0], self.w13.shape[0]).scatter(-1, topk_idx, topk_weight)
        gate, up = torch.einsum("th,ehi->eti", hidden_states, self.w13).chunk(2, dim=-1)
        routed = torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.w2, mask)
        if self.n_shared_experts == 0:
            return routed
        return routed + hidden_states_share


class DecoderLayer(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, n_shared_experts: int,
                 multistream: bool) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.post_attention_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.mlp = DeepseekV3MoE(hidden, inter, experts, top_k, n_shared_experts, multistream)

    def forward(self, hidden_states: torch.Tensor, is_prefill: bool) -> torch.Tensor:
        q, k, v = self.qkv(self.input_layernorm(hidden_states)).chunk(3, dim=-1)
        hidden_states = hidden_states + (q @ k.T * q.shape[-1] ** -0.5).softmax(dim=-1) @ v
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states), is_prefill)


class DeepseekModel(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, layers: int = 4,
                 multistream: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            DecoderLayer(hidden, inter, experts, top_k, 0 if i % 5 == 4 else 1, multistream) for i in range(layers))
        self.norm = nn.RMSNorm(hidden, eps=1e-6)

    def forward(self, hidden_states: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        for layer in self.layers:
            hidden_states = layer(hidden_states, is_prefill)
        return self.norm(hidden_states)
