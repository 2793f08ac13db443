"""omni-infer's MoE decode by hand: per layer two blocks on "stream_shared_expert", the user's two events, one join.

The shared expert's gate/up projection stays on the main stream: the expert-weight
prefetch right after it reads it (upstream's ``npu_prefetch(w13_weight, wait_gate,
...)``), so a side block there would be joined before any main-stream work. The
activation waits for the user's ``dispatched``, recorded on the main stream after
the gate/up projection, so that wait also orders the side stream after what it
reads (no fork of its own); the main stream reads ``gate_up_share`` last before it,
so it is kept for the side stream. The down projection waits for ``gmm2_done`` and
records the join. A layer given its successor's attention weights (all but the
last) waits for the join before the three prefetches that read the shared output,
ahead of the combine; the last layer waits only before it returns the two outputs.
"""

from __future__ import annotations

import torch
from torch import nn

from corpus.omni_moe_prefetch.experts import combine, grouped_matmul, prefetch, select_experts, swiglu
from npudsl import runtime

SOURCE = "corpus:omni_moe_prefetch"
USER_EVENTS = ("dispatched", "gmm2_done")
SIDE = "stream_shared_expert"
ATTN_WEIGHTS = ("q_a_proj_weight", "q_b_proj_weight", "W_UK")


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _moe(self, moe: nn.Module, hidden_states: torch.Tensor, next_weights: dict | None):
        router_logits = moe.gate(hidden_states.float())
        gate_up = moe.shared_experts.gate_up_proj(hidden_states)
        prefetch(moe.l2, moe.w13_weight, gate_up, moe.w13_prefetch_size)
        topk_weights, topk_ids = select_experts(router_logits, moe.top_k, moe.routed_scaling_factor)
        expert_ids = topk_ids.reshape(-1)
        expand_x = hidden_states.repeat_interleave(moe.top_k, dim=0)
        runtime.record("dispatched")
        with runtime.stream(SIDE):
            runtime.wait("dispatched")
            runtime.record_stream(gate_up, SIDE)
            act = swiglu(gate_up)
        down_out = grouped_matmul(swiglu(grouped_matmul(expand_x, moe.w13_weight, expert_ids)), moe.w2_weight,
                                  expert_ids)
        runtime.record("gmm2_done")
        with runtime.stream(SIDE):
            runtime.wait("gmm2_done")
            shared_output = moe.shared_experts.down_proj(act)
            runtime.record("join")
        if next_weights is not None:
            runtime.wait("join")
            for name in ATTN_WEIGHTS:
                prefetch(moe.l2, next_weights[name], shared_output, moe.attn_prefetch_size)
        routed = combine(down_out, topk_weights)
        if next_weights is None:
            runtime.wait("join")
        return routed + shared_output

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        layers, residual = self.m.layers, None
        for i, layer in enumerate(layers):
            residual = hidden_states if residual is None else hidden_states + residual
            residual = layer.self_attn(layer.input_layernorm(residual)) + residual
            nxt = layers[i + 1].self_attn if i + 1 < len(layers) else None
            weights = None if nxt is None else dict(zip(ATTN_WEIGHTS, (nxt.q_a_proj.weight, nxt.q_b_proj.weight,
                                                                        nxt.W_UK)))
            hidden_states = self._moe(layer.mlp, layer.post_attention_layernorm(residual), weights)
        return self.m.norm(hidden_states + residual)
