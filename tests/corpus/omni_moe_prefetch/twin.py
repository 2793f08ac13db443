"""Single-stream twin of :mod:`corpus.omni_moe_prefetch` (same parameter and buffer names, no npudsl)."""

from __future__ import annotations

from typing import Optional

import torch

from .experts import MoEWeights, combine, dispatch, grouped_matmul, prefetch, select_experts, swiglu


class DeepseekMoE(MoEWeights):
    def forward(self, hidden_states: torch.Tensor, residual: torch.Tensor,
                next_attention_weights: Optional[dict] = None):
        router_logits = self.gate(hidden_states.float())
        gate_up_share = self.shared_experts.gate_up_proj(hidden_states)
        if self.w13_prefetch_size > 0:
            prefetch(self.l2, self.w13_weight, gate_up_share, self.w13_prefetch_size)
        topk_weights, topk_ids = select_experts(router_logits, self.top_k, self.routed_scaling_factor)
        expand_x, expert_ids, _ = dispatch(hidden_states, topk_ids, self.experts)
        act = swiglu(gate_up_share)
        down_out = grouped_matmul(swiglu(grouped_matmul(expand_x, self.w13_weight, expert_ids)), self.w2_weight,
                                  expert_ids)
        shared_output = self.shared_experts.down_proj(act)
        if next_attention_weights is not None and next_attention_weights["q_a_proj_weight"] is not None:
            for name in ("q_a_proj_weight", "q_b_proj_weight", "W_UK"):
                prefetch(self.l2, next_attention_weights[name], shared_output, self.attn_prefetch_size)
        return (combine(down_out, topk_weights), shared_output), residual
