"""The fused MoE on the MC2 path in GE mode, its shared expert in three phases on "moe_secondary".

Shaped after ``torchair_fused_experts_with_mc2`` in vllm-ascend
``vllm_ascend/torchair/ops/torchair_fused_moe.py``: the shared expert's gate/up
projection overlaps the MC2 dispatch, its activation the grouped matmuls, its
down projection the combine; the caller adds the two results. Upstream places
the phases with three ``npu_wait_tensor`` calls; here is what gives each order:

| # | upstream (stream) | here |
| --- | --- | --- |
| 1 | ``npu_wait_tensor(hidden_states, topk_weights)`` (moe_secondary) | the fork of ``shared_gate_up``: its stream waits for the caller's work, the routing included (it reads ``hidden_states``, made on the main stream) |
| 2 | ``npu_wait_tensor(shared_gate_up, expand_x)`` (moe_secondary) | ``@records("dispatched")`` on ``mc2_dispatch``, ``@after("dispatched")`` on ``shared_act`` |
| 3 | ``npu_wait_tensor(shared_act, down_out_list)`` (moe_secondary) | ``@records("gmm2_done")`` on ``experts_mlp``, ``@after("gmm2_done")`` on ``shared_down`` |

The caller's last value before each side call is what upstream has there: a
tuple unpacked (``topk_weights, topk_ids = ...``, ``expand_x, ... = output[0:7]``)
or a subscript (``npu_grouped_matmul(...)[0]``).

Idioms: phased_shared (three side phases around dispatch, the grouped matmuls and
combine), module_constants (the stream tag), container_returns (tuples).
"""

from __future__ import annotations

import torch

from npudsl import after, on_stream, records

from .experts import MoEWeights, combine, dispatch, grouped_matmul, select_experts, swiglu

MOE_SECONDARY = "moe_secondary"


class FusedMoEMC2(MoEWeights):
    def __init__(self, *args: int, multistream: bool = True, **kwargs: int) -> None:
        super().__init__(*args, **kwargs)
        self.multistream = multistream

    @on_stream(MOE_SECONDARY, when="self.multistream")
    def shared_gate_up(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.shared_experts.gate_up_proj(hidden_states)

    @records("dispatched")
    def mc2_dispatch(self, hidden_states: torch.Tensor, topk_ids: torch.Tensor):
        return dispatch(hidden_states, topk_ids, self.experts)

    @on_stream(MOE_SECONDARY, when="self.multistream")
    @after("dispatched")
    def shared_act(self, shared_gate_up: torch.Tensor) -> torch.Tensor:
        return swiglu(shared_gate_up)

    @records("gmm2_done")
    def experts_mlp(self, expand_x: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
        return grouped_matmul(swiglu(grouped_matmul(expand_x, self.w13, expert_ids)), self.w2, expert_ids)

    @on_stream(MOE_SECONDARY, when="self.multistream")
    @after("gmm2_done")
    def shared_down(self, shared_act: torch.Tensor) -> torch.Tensor:
        return self.shared_experts.down_proj(shared_act)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden_states = self.post_attention_layernorm(x)
        topk_weights, topk_ids = select_experts(self.gate(hidden_states), self.top_k)
        shared_gate_up = self.shared_gate_up(hidden_states)
        expand_x, expert_ids, _ = self.mc2_dispatch(hidden_states, topk_ids)
        shared_act = self.shared_act(shared_gate_up)
        down_out = self.experts_mlp(expand_x, expert_ids)
        routed = combine(down_out, topk_weights)
        return routed + self.shared_down(shared_act)
