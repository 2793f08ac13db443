"""Single-stream twin of :mod:`corpus.ge_moe_mc2_waits` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch

from .experts import MoEWeights, combine, dispatch, grouped_matmul, select_experts, swiglu


class FusedMoEMC2(MoEWeights):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden_states = self.post_attention_layernorm(x)
        topk_weights, topk_ids = select_experts(self.gate(hidden_states), self.top_k)
        shared_act = swiglu(self.shared_experts.gate_up_proj(hidden_states))
        expand_x, expert_ids, _ = dispatch(hidden_states, topk_ids, self.experts)
        down_out = grouped_matmul(swiglu(grouped_matmul(expand_x, self.w13, expert_ids)), self.w2, expert_ids)
        return combine(down_out, topk_weights) + self.shared_experts.down_proj(shared_act)
