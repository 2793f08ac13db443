"""A shared+routed MoE block whose shared expert is placed, phase by phase, by hand-recorded events.

Shaped after ``AscendFusedMoE.shared_forward_impl`` and ``_forward_shared_experts``
(vllm-ascend ``vllm_ascend/ops/fused_moe/fused_moe.py``, the eager path with native
streams): the routed path records an event before the gate, before the dispatch,
before the second grouped matmul and before the combine (the last three in
``vllm_ascend/ops/fused_moe/moe_comm_method.py``); the quantized shared expert
then runs on the shared-experts stream in four phases, each waiting for one of those
events (quantize with the gate, gate/up projection with the dispatch, activation
with the second grouped matmul, down projection with the combine), and the main
stream waits for the shared stream at the end. All waits are written by hand
(``sync="manual"``); the events live in one class, like upstream's methods.

Idioms: manual_pipeline (events recorded on the main stream, waited on by a side
stream, and back), phased_shared (four side phases), container_returns (tuples),
module_constants (the stream tag).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import after, keep_output, on_stream, records

from .ops import QuantLinear, combine, dequant_swiglu_quant, dispatch, dynamic_quant

SHARED_EXPERTS_STREAM = "shared_experts_calculation"


class MoEBlock(nn.Module):
    def __init__(self, hidden: int, inter: int, shared_inter: int, experts: int, top_k: int,
                 multistream: bool = True) -> None:
        super().__init__()
        self.top_k, self.multistream = top_k, multistream
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)
        self.shared_gate_up_proj = QuantLinear(hidden, 2 * shared_inter)
        self.shared_down_proj = QuantLinear(shared_inter, hidden)

    @records("before_routed_experts")
    def gate_input(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return hidden_states.float()

    @records("before_dispatch")
    def select_experts(self, router_logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights, ids = router_logits.softmax(dim=-1).topk(self.top_k, dim=-1)
        return weights / weights.sum(dim=-1, keepdim=True), ids

    @records("before_gmm2")
    def gmm1(self, rows: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
        gate, up = torch.bmm(rows.unsqueeze(1), self.w13[expert_ids]).squeeze(1).chunk(2, dim=-1)
        return F.silu(gate) * up

    @records("before_combine")
    def gmm2(self, act: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
        return torch.bmm(act.unsqueeze(1), self.w2[expert_ids]).squeeze(1)

    def forward_impl(self, hidden_states: torch.Tensor) -> torch.Tensor:
        topk_weights, topk_ids = self.select_experts(self.gate(self.gate_input(hidden_states)))
        rows, expert_ids = dispatch(hidden_states, topk_ids, self.top_k)
        return combine(self.gmm2(self.gmm1(rows, expert_ids), expert_ids), topk_weights)

    @on_stream(SHARED_EXPERTS_STREAM, sync="manual", when="self.multistream")
    @after("before_routed_experts")
    @keep_output
    def shared_quant(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return dynamic_quant(hidden_states)

    @on_stream(SHARED_EXPERTS_STREAM, sync="manual", when="self.multistream")
    @after("before_dispatch")
    @keep_output
    def shared_gate_up(self, quantized_x: torch.Tensor) -> torch.Tensor:
        return quantized_x @ self.shared_gate_up_proj.weight.T

    @on_stream(SHARED_EXPERTS_STREAM, sync="manual", when="self.multistream")
    @after("before_gmm2")
    @keep_output
    def shared_act(self, gate_up: torch.Tensor, pertoken_scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return dequant_swiglu_quant(gate_up, self.shared_gate_up_proj.weight_scale, pertoken_scale)

    @on_stream(SHARED_EXPERTS_STREAM, sync="manual", when="self.multistream")
    @after("before_combine")
    @records("shared_done")
    @keep_output
    def shared_down(self, quantized_x: torch.Tensor, swiglu_out_scale: torch.Tensor) -> torch.Tensor:
        return (quantized_x @ self.shared_down_proj.weight.T) * self.shared_down_proj.weight_scale * swiglu_out_scale

    @after("shared_done")
    def add_shared(self, routed_out: torch.Tensor, shared_out: torch.Tensor) -> torch.Tensor:
        return routed_out + shared_out

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        routed_out = self.forward_impl(hidden_states)
        quantized_x, pertoken_scale = self.shared_quant(hidden_states)
        gate_up = self.shared_gate_up(quantized_x)
        quantized_x, swiglu_out_scale = self.shared_act(gate_up, pertoken_scale)
        shared_out = self.shared_down(quantized_x, swiglu_out_scale)
        return self.add_shared(routed_out, shared_out)
