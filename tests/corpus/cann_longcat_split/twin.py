"""Single-stream twin of :mod:`corpus.cann_longcat_split` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def _linear(hidden: int, out: int) -> nn.Linear:
    return nn.Linear(hidden, out, bias=False)


class _Norm(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

    def forward(self, x, residual):
        residual = x if residual is None else x + residual
        return F.rms_norm(residual, (residual.shape[-1],), self.weight, eps=1e-6), residual


class _Attn(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.qkv, self.o_proj = _linear(hidden, 3 * hidden), _linear(hidden, hidden)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.o_proj((q @ k.T * x.shape[-1] ** -0.5).softmax(dim=-1) @ v)


class _Mlp(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj, self.down_proj = _linear(hidden, 2 * inter), _linear(inter, hidden)

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class _Moe(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, zero_experts: int) -> None:
        super().__init__()
        self.classifier = _linear(hidden, experts + zero_experts)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)


class _Layer(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, zero_experts: int) -> None:
        super().__init__()
        self.mlp = _Moe(hidden, inter, experts, zero_experts)
        self.self_attn = nn.ModuleList(_Attn(hidden) for _ in range(2))
        self.mlps = nn.ModuleList(_Mlp(hidden, inter) for _ in range(2))
        self.input_layernorm = nn.ModuleList(_Norm(hidden) for _ in range(2))
        self.post_attention_layernorm = nn.ModuleList(_Norm(hidden) for _ in range(2))


class LongcatFlashModel(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, zero_experts: int, top_k: int, layers: int = 2) -> None:
        super().__init__()
        self.experts, self.top_k = experts, top_k
        self.layers = nn.ModuleList(_Layer(hidden, inter, experts, zero_experts) for _ in range(layers))
        self.norm = _Norm(hidden)

    def _moe(self, moe: _Moe, x: torch.Tensor) -> torch.Tensor:
        weights, ids = moe.classifier(x).softmax(dim=-1).topk(self.top_k, dim=-1)
        mask = x.new_zeros(x.shape[0], moe.classifier.out_features).scatter(-1, ids, weights)
        gate, up = torch.einsum("th,ehi->eti", x, moe.w13).chunk(2, dim=-1)
        routed = torch.einsum("eti,eih,te->th", F.silu(gate) * up, moe.w2, mask[:, : self.experts])
        return routed + x * mask[:, self.experts :].sum(dim=-1, keepdim=True)

    def forward(self, x: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        residual = None
        for layer in self.layers:
            x, residual = layer.input_layernorm[0](x, residual)
            normed, residual = layer.post_attention_layernorm[0](layer.self_attn[0](x), residual)
            h, residual = layer.input_layernorm[1](layer.mlps[0](normed), residual)
            h, residual = layer.post_attention_layernorm[1](layer.self_attn[1](h), residual)
            x = layer.mlps[1](h) + self._moe(layer.mlp, normed)
        return self.norm(x, residual)[0]
