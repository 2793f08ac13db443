"""Single-stream twin of :mod:`corpus.omni_config_streams` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class DeepseekMoE(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.shared_gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.shared_down = nn.Linear(inter, hidden, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = x.abs().amax(dim=-1).clamp_min(1e-6) / 127
        x_int8 = torch.round(x / scale.unsqueeze(-1))
        weights, ids = self.gate(x).softmax(dim=-1).topk(self.top_k, dim=-1)
        weights, ids, scale = torch.cat((weights, ids.float(), scale.unsqueeze(-1)), dim=-1).split(
            [self.top_k, self.top_k, 1], dim=-1)
        rows = torch.cat([x_int8, x_int8.roll(1, dims=0)]) * torch.cat([scale, scale.roll(1, dims=0)])
        ids, weights = torch.cat([ids, ids.roll(1, dims=0)]), torch.cat([weights, weights.roll(1, dims=0)])
        mask = rows.new_zeros(rows.shape[0], self.w13.shape[0]).scatter(-1, torch.round(ids).long(), weights)
        gate, up = torch.einsum("th,ehi->eti", rows, self.w13).chunk(2, dim=-1)
        routed = torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.w2, mask)
        gate, up = self.shared_gate_up(x).chunk(2, dim=-1)
        half = routed.shape[0] // 2
        return routed[:half] + routed[half:].roll(-1, dims=0) + self.shared_down(F.silu(gate) * up)
