"""Single-stream twin of :mod:`corpus.cann_v32_deep` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class _Shared(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)


class _Moe(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, shared: int) -> None:
        super().__init__()
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)
        if shared:
            self.shared_experts = _Shared(hidden, inter * shared)


class _Layer(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, shared: int) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.post_attention_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.mlp = _Moe(hidden, inter, experts, shared)


class DeepseekModel(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, layers: int = 4) -> None:
        super().__init__()
        self.top_k = top_k
        self.layers = nn.ModuleList(_Layer(hidden, inter, experts, 0 if i % 5 == 4 else 1) for i in range(layers))
        self.norm = nn.RMSNorm(hidden, eps=1e-6)

    def _moe(self, moe: _Moe, x: torch.Tensor) -> torch.Tensor:
        weights, ids = moe.gate(x).sigmoid().topk(self.top_k, dim=-1)
        mask = x.new_zeros(x.shape[0], moe.w13.shape[0]).scatter(-1, ids, weights)
        gate, up = torch.einsum("th,ehi->eti", x, moe.w13).chunk(2, dim=-1)
        out = torch.einsum("eti,eih,te->th", F.silu(gate) * up, moe.w2, mask)
        if hasattr(moe, "shared_experts"):
            gate, up = moe.shared_experts.gate_up_proj(x).chunk(2, dim=-1)
            out = out + moe.shared_experts.down_proj(F.silu(gate) * up)
        return out

    def forward(self, x: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        for layer in self.layers:
            q, k, v = layer.qkv(layer.input_layernorm(x)).chunk(3, dim=-1)
            x = x + (q @ k.T * q.shape[-1] ** -0.5).softmax(dim=-1) @ v
            x = x + self._moe(layer.mlp, layer.post_attention_layernorm(x))
        return self.norm(x)
