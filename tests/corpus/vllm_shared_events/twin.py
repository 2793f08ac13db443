"""Single-stream twin of :mod:`corpus.vllm_shared_events` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .ops import QuantLinear, combine, dequant_swiglu_quant, dispatch, dynamic_quant


class MoEBlock(nn.Module):
    def __init__(self, hidden: int, inter: int, shared_inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)
        self.shared_gate_up_proj = QuantLinear(hidden, 2 * shared_inter)
        self.shared_down_proj = QuantLinear(shared_inter, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights, ids = self.gate(x.float()).softmax(dim=-1).topk(self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        rows, expert_ids = dispatch(x, ids, self.top_k)
        gate, up = torch.bmm(rows.unsqueeze(1), self.w13[expert_ids]).squeeze(1).chunk(2, dim=-1)
        routed = combine(torch.bmm((F.silu(gate) * up).unsqueeze(1), self.w2[expert_ids]).squeeze(1), weights)
        quantized, scale = dynamic_quant(x)
        act, act_scale = dequant_swiglu_quant(quantized @ self.shared_gate_up_proj.weight.T,
                                              self.shared_gate_up_proj.weight_scale, scale)
        down = self.shared_down_proj
        return routed + (act @ down.weight.T) * down.weight_scale * act_scale
