"""omni-infer's MoE decode with dispatch/combine in GE mode: the shared expert in three phases on its own stream,
and weight prefetches on the main stream that wait for the shared expert's results.

Shaped after ``DeepseekMoE._forward_decode_dispatch_combine`` in omni-infer
``omni/models/common/layers/moe/deepseek_moe.py`` (bf16 path). Upstream places the
shared expert with three ``npu_wait_tensor`` calls on ``STREAM_SHARED_EXPERT`` and
orders two prefetches on the main stream after its results
(``npu_prefetch``'s ``dependency``); here is what gives each order:

| # | upstream (stream) | here |
| --- | --- | --- |
| 1 | ``npu_wait_tensor(hidden_states, router_logits)`` (shared) | the fork of ``shared_gate_up``, called after the gate |
| 2 | ``npu_prefetch(w13_weight, wait_gate, ...)`` (main) | ``prefetch(..., wait_gate, ...)``: reads the gate/up result |
| 3 | ``npu_wait_tensor(wait_gate, expand_x)`` (shared) | ``@records("dispatched")`` on ``mc2_dispatch``, ``@after("dispatched")`` on ``shared_act`` |
| 4 | ``npu_wait_tensor(intermediate, hidden_states_experts)`` (shared) | ``@records("gmm2_done")`` on ``experts_mlp``, ``@after("gmm2_done")`` on ``shared_down`` |
| 5 | ``npu_prefetch(q_a_proj_weight, shared_output, ...)`` and two more (main, only when the next layer's attention weights are given) | ``prefetch(..., shared_output, ...)`` under the same test |

The method returns the routed and the shared output unsummed, as upstream does
(the decoder layer adds them, outside the super kernel): on the last layer no
prefetch reads the shared output before the combine.

Idioms: phased_shared (three side phases around dispatch, the grouped matmuls and
combine), module_constants (the stream tag), container_returns (the unsummed
tuple), non_tensor_args (a dict of the next layer's weights, or of Nones),
if_call (a side result read under ``if`` on one path, returned on the other).
"""

from __future__ import annotations

from typing import Optional

import torch

from npudsl import after, on_stream, records

from .experts import MoEWeights, combine, dispatch, grouped_matmul, prefetch, select_experts, swiglu

__all__ = ["DeepseekMoE"]

STREAM_SHARED_EXPERT = "stream_shared_expert"


class DeepseekMoE(MoEWeights):
    def __init__(self, *args: int, multistream: bool = True, **kwargs: int) -> None:
        super().__init__(*args, **kwargs)
        self.multistream = multistream

    @on_stream(STREAM_SHARED_EXPERT, when="self.multistream")
    def shared_gate_up(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.shared_experts.gate_up_proj(hidden_states)

    @records("dispatched")
    def mc2_dispatch(self, hidden_states: torch.Tensor, topk_ids: torch.Tensor):
        return dispatch(hidden_states, topk_ids, self.experts)

    @on_stream(STREAM_SHARED_EXPERT, when="self.multistream")
    @after("dispatched")
    def shared_act(self, gate_up_share: torch.Tensor) -> torch.Tensor:
        return swiglu(gate_up_share)

    @records("gmm2_done")
    def experts_mlp(self, expand_x: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
        gate_up_proj = swiglu(grouped_matmul(expand_x, self.w13_weight, expert_ids))
        return grouped_matmul(gate_up_proj, self.w2_weight, expert_ids)

    @on_stream(STREAM_SHARED_EXPERT, when="self.multistream")
    @after("gmm2_done")
    def shared_down(self, intermediate_hiddenstates_share: torch.Tensor) -> torch.Tensor:
        return self.shared_experts.down_proj(intermediate_hiddenstates_share)

    def forward(self, hidden_states: torch.Tensor, residual: torch.Tensor,
                next_attention_weights: Optional[dict] = None):
        router_logits = self.gate(hidden_states.float())
        hidden_states = hidden_states.unsqueeze(1).squeeze(1)
        gate_up_share = self.shared_gate_up(hidden_states)
        wait_gate = gate_up_share if isinstance(gate_up_share, torch.Tensor) else gate_up_share[0]
        if self.w13_prefetch_size > 0:
            prefetch(self.l2, self.w13_weight, wait_gate, self.w13_prefetch_size)
        topk_weights, topk_ids = select_experts(router_logits, self.top_k, self.routed_scaling_factor)
        expand_x, expert_ids, _ = self.mc2_dispatch(hidden_states, topk_ids)
        intermediate_hiddenstates_share = self.shared_act(gate_up_share)
        hidden_states_experts = self.experts_mlp(expand_x, expert_ids)
        shared_output = self.shared_down(intermediate_hiddenstates_share)
        if next_attention_weights is not None and next_attention_weights["q_a_proj_weight"] is not None:
            attn_prefetch_flag = shared_output
            prefetch(self.l2, next_attention_weights["q_a_proj_weight"], attn_prefetch_flag, self.attn_prefetch_size)
            prefetch(self.l2, next_attention_weights["q_b_proj_weight"], attn_prefetch_flag, self.attn_prefetch_size)
            prefetch(self.l2, next_attention_weights["W_UK"], attn_prefetch_flag, self.attn_prefetch_size)
        hidden_states_route = combine(hidden_states_experts, topk_weights)
        if shared_output is not None:
            final_hidden_states = (hidden_states_route, shared_output)
        return final_hidden_states, residual
