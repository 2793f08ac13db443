"""The torchair MC2 fused MoE by hand: three blocks on "moe_secondary", the user's two events, one fork, one join.

The gate/up projection reads ``hidden_states`` (made on the main stream): its
block waits for the fork, and ``hidden_states`` is kept for the side stream (the
main stream reads it last in the dispatch and allocates again before the join).
The activation and the down projection wait for the user's ``dispatched`` and
``gmm2_done``; each is a block of its own, since each waits for an event the main
stream records only after the previous block was issued. One join before the sum.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import runtime

SOURCE = "corpus:ge_moe_mc2_waits"
USER_EVENTS = ("dispatched", "gmm2_done")
SIDE = "moe_secondary"


def _swiglu(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


def _gmm(rows: torch.Tensor, weights: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
    return torch.bmm(rows.unsqueeze(1), weights[expert_ids]).squeeze(1)


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _route(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights, ids = self.m.gate(hidden_states).softmax(dim=-1).topk(self.m.top_k, dim=-1)
        return weights / weights.sum(dim=-1, keepdim=True), ids

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, shared = self.m, self.m.shared_experts
        hidden_states = m.post_attention_layernorm(x)
        topk_weights, topk_ids = self._route(hidden_states)
        runtime.record("fork")
        with runtime.stream(SIDE):
            runtime.wait("fork")
            runtime.record_stream(hidden_states, SIDE)
            gate_up = shared.gate_up_proj(hidden_states)
        expert_ids = topk_ids.reshape(-1)
        expand_x = hidden_states.repeat_interleave(m.top_k, dim=0)
        runtime.record("dispatched")
        with runtime.stream(SIDE):
            runtime.wait("dispatched")
            act = _swiglu(gate_up)
        down_out = _gmm(_swiglu(_gmm(expand_x, m.w13, expert_ids)), m.w2, expert_ids)
        runtime.record("gmm2_done")
        routed = (down_out.view(*topk_weights.shape, -1) * topk_weights.unsqueeze(-1)).sum(dim=1)
        with runtime.stream(SIDE):
            runtime.wait("gmm2_done")
            shared_out = shared.down_proj(act)
            runtime.record("join")
        runtime.wait("join")
        return routed + shared_out
