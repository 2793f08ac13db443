"""Routed experts with dispatch/combine, overlapping the shared expert phase by phase.

Shaped after ``torchair_fused_experts_with_mc2`` and ``TorchairAscendFusedMoE.forward``
(vllm-ascend ``vllm_ascend/torchair/ops/torchair_fused_moe.py``). On CPU the MC2
dispatch and combine collectives are stand-ins with the same shapes: dispatch
repeats every token once per chosen expert, combine sums the expert outputs
weighted by the router.

Idioms: if_call (stream calls under ``if shared_experts is not None:`` and an early
``return`` when there is no shared expert), phased_shared (the caller side),
non_tensor_args (``is_prefill: bool``, ``top_k: int``, a module passed as ``shared_experts``).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def select_experts(router_logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    weights, ids = router_logits.softmax(dim=-1).topk(top_k, dim=-1)
    return weights / weights.sum(dim=-1, keepdim=True), ids


def dispatch(hidden_states: torch.Tensor, topk_ids: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Stand-in for ``npu_moe_distribute_dispatch``: one row per (token, chosen expert)."""
    return hidden_states.repeat_interleave(top_k, dim=0), topk_ids.reshape(-1)


def grouped_mlp(expand_x: torch.Tensor, expert_ids: torch.Tensor, w13: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    gate_up = torch.bmm(expand_x.unsqueeze(1), w13[expert_ids]).squeeze(1)
    gate, up = gate_up.chunk(2, dim=-1)
    return torch.bmm((F.silu(gate) * up).unsqueeze(1), w2[expert_ids]).squeeze(1)


def combine(down_out: torch.Tensor, topk_weights: torch.Tensor) -> torch.Tensor:
    """Stand-in for ``npu_moe_distribute_combine``."""
    return (down_out.view(*topk_weights.shape, -1) * topk_weights.unsqueeze(-1)).sum(dim=1)


def fused_experts_with_mc2(hidden_states, w13, w2, topk_weights, topk_ids, top_k: int, shared_experts=None):
    if shared_experts is not None:
        shared_gate_up, _ = shared_experts.gate_up_phase(hidden_states)
    expand_x, expert_ids = dispatch(hidden_states, topk_ids, top_k)
    if shared_experts is not None:
        shared_act = shared_experts.act_phase(shared_gate_up)
    down_out = grouped_mlp(expand_x, expert_ids, w13, w2)
    if shared_experts is not None:
        shared_out, _ = shared_experts.down_phase(shared_act)
    hidden_states = combine(down_out, topk_weights)
    if shared_experts is None:
        return hidden_states
    return hidden_states, shared_out


class FusedMoE(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, multistream: bool) -> None:
        super().__init__()
        self.top_k = top_k
        self.multistream_overlap_shared_expert = multistream
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, hidden_states: torch.Tensor, router_logits: torch.Tensor, is_prefill: bool,
                shared_experts: nn.Module | None = None):
        topk_weights, topk_ids = select_experts(router_logits, self.top_k)
        overlap = self.multistream_overlap_shared_expert and not is_prefill
        shared_hidden_states = None
        if shared_experts is not None and not overlap:
            shared_hidden_states = shared_experts(hidden_states)
        out = fused_experts_with_mc2(hidden_states, self.w13, self.w2, topk_weights, topk_ids, self.top_k,
                                     shared_experts=shared_experts if overlap else None)
        if isinstance(out, tuple):
            out, shared_hidden_states = out
        if shared_experts is None:
            return out
        return out, shared_hidden_states
