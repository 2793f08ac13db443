"""Single-stream twin of :mod:`corpus.vllm_w8a8_shared` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .quant import W8A8Linear, dynamic_quant


class _Shared(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = W8A8Linear(hidden, 2 * inter)
        self.down_proj = W8A8Linear(inter, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(*dynamic_quant(x)).chunk(2, dim=-1)
        act, scale = dynamic_quant(F.silu(gate) * up)
        return self.down_proj(act, scale.squeeze(-1))


class _Layer(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, dense: bool) -> None:
        super().__init__()
        self.shared_experts = _Shared(hidden, inter)
        if not dense:
            self.gate = nn.Linear(hidden, experts, bias=False)
            self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
            self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)


class W8A8Model(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.layers = nn.ModuleList(_Layer(hidden, inter, experts, i == 0) for i in range(2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            h = F.rms_norm(x, (x.shape[-1],))
            out = layer.shared_experts(h)
            if i > 0:
                weights, ids = layer.gate(h).softmax(dim=-1).topk(self.top_k, dim=-1)
                mask = h.new_zeros(h.shape[0], layer.w13.shape[0]).scatter(-1, ids, weights)
                gate, up = torch.einsum("th,ehi->eti", h, layer.w13).chunk(2, dim=-1)
                out = torch.einsum("eti,eih,te->th", F.silu(gate) * up, layer.w2, mask) + out
            x = x + out
        return x
