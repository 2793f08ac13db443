"""vllm-ascend's eager shared+routed MoE by hand: the four shared phases in one block, the user's events kept.

The routed path records its four points; the shared phases are issued after it
(as in the decorated model), so they share one block on the shared stream, each
phase waiting for its point. They read only the input and each other's results;
the main stream waits for ``shared_done`` before the sum, and nothing is
allocated on the shared stream afterwards: no ``record_stream``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from corpus.vllm_shared_events.ops import combine, dequant_swiglu_quant, dispatch, dynamic_quant
from npudsl import runtime

SOURCE = "corpus:vllm_shared_events"
USER_EVENTS = ("before_routed_experts", "before_dispatch", "before_gmm2", "before_combine", "shared_done")


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _routed(self, x: torch.Tensor) -> torch.Tensor:
        m = self.m
        gate_input = x.float()
        runtime.record("before_routed_experts")
        weights, ids = m.gate(gate_input).softmax(dim=-1).topk(m.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        runtime.record("before_dispatch")
        rows, expert_ids = dispatch(x, ids, m.top_k)
        gate, up = torch.bmm(rows.unsqueeze(1), m.w13[expert_ids]).squeeze(1).chunk(2, dim=-1)
        act = F.silu(gate) * up
        runtime.record("before_gmm2")
        down = torch.bmm(act.unsqueeze(1), m.w2[expert_ids]).squeeze(1)
        runtime.record("before_combine")
        return combine(down, weights)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = self.m
        routed = self._routed(x)
        with runtime.stream("shared_experts_calculation"):
            runtime.wait("before_routed_experts")
            quantized, scale = dynamic_quant(x)
            runtime.wait("before_dispatch")
            gate_up = quantized @ m.shared_gate_up_proj.weight.T
            runtime.wait("before_gmm2")
            act, act_scale = dequant_swiglu_quant(gate_up, m.shared_gate_up_proj.weight_scale, scale)
            runtime.wait("before_combine")
            down = m.shared_down_proj
            shared = (act @ down.weight.T) * down.weight_scale * act_scale
            runtime.record("shared_done")
        runtime.wait("shared_done")
        return routed + shared
