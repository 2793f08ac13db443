"""Single-stream twin of :mod:`corpus.omni_decode_six_streams` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .collectives import all_gather_cross, all_gather_local, dynamic_quant, reduce_scatter_local, swap


class _Experts(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int) -> None:
        super().__init__()
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)


class DeepseekMoE(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, large_batch: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.shared_gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.shared_down = nn.Linear(inter, hidden, bias=False)
        self.experts = _Experts(hidden, inter, experts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_int8, scale = dynamic_quant(x)
        values, ids = self.gate(x).softmax(dim=-1).topk(self.top_k, dim=-1)
        topk_all = all_gather_cross(all_gather_local(torch.cat((values, ids.float(), scale.unsqueeze(-1)), dim=-1)))
        weights, ids, global_scale = topk_all.split([self.top_k, self.top_k, 1], dim=-1)
        gate, up = self.shared_gate_up(x_int8 * scale.unsqueeze(-1)).chunk(2, dim=-1)
        shared = self.shared_down(F.silu(gate) * up)
        rows = torch.cat([all_gather_local(x_int8)] + [all_gather_local(swap(x_int8, r)) for r in range(3)])
        rows = rows * global_scale
        mask = rows.new_zeros(rows.shape[0], self.experts.w13.shape[0]).scatter(-1, torch.round(ids).long(), weights)
        gate, up = torch.einsum("th,ehi->eti", rows, self.experts.w13).chunk(2, dim=-1)
        final = torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.experts.w2, mask).to(torch.bfloat16)
        parts = [reduce_scatter_local(p) for p in final.split(final.shape[0] // 4)]
        out = parts[0] + swap(parts[1], 0) + swap(parts[2], 1) + swap(parts[3], 2)
        return out.float() + shared
