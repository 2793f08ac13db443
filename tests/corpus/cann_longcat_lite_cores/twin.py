"""Single-stream twin of :mod:`corpus.cann_longcat_lite_cores` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class _SwiGLU(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.up = nn.Linear(hidden, 2 * inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        gate, up = self.up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class _Layer(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int) -> None:
        super().__init__()
        self.norms = nn.ModuleList(nn.RMSNorm(hidden, eps=1e-6) for _ in range(4))
        self.attn = nn.ModuleList(nn.Linear(hidden, 3 * hidden, bias=False) for _ in range(2))
        self.mlps = nn.ModuleList(_SwiGLU(hidden, inter) for _ in range(2))
        self.router = nn.Linear(hidden, experts, bias=False)
        self.experts = nn.ModuleList(_SwiGLU(hidden, inter) for _ in range(experts))

    def attention(self, i, x):
        q, k, v = self.attn[i](x).unsqueeze(0).chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v).squeeze(0)


class LongcatLiteModel(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, layers: int = 2) -> None:
        super().__init__()
        self.top_k = top_k
        self.layers = nn.ModuleList(_Layer(hidden, inter, experts) for _ in range(layers))

    def forward(self, x: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        for layer in self.layers:
            residual = x + layer.attention(0, layer.norms[0](x))
            normed = layer.norms[1](residual)
            weights, ids = layer.router(normed).softmax(dim=-1).topk(self.top_k, dim=-1)
            gates = normed.new_zeros(normed.shape[0], len(layer.experts)).scatter(-1, ids, weights)
            moe = sum(expert(normed) * gates[:, e : e + 1] for e, expert in enumerate(layer.experts))
            residual = residual + layer.mlps[0](normed)
            residual = residual + layer.attention(1, layer.norms[2](residual))
            x = residual + layer.mlps[1](layer.norms[3](residual)) + moe
        return x
