"""The routed-expert path of vllm-ascend's MoE, recording the points the shared expert overlaps with.

Shaped after ``fused_experts`` in vllm-ascend ``vllm_ascend/ops/fused_moe/moe_comm_method.py``:
the main stream records ``before_dispatch`` once the experts are chosen (before
the token dispatch), ``before_gmm2`` between the first grouped matmul with its
activation and the second, and ``before_combine`` once the second grouped matmul
is done (before the token combine). Upstream passes ``torch.npu.Event`` objects
back to the caller in a ``FusedMoEEvents``; here the three points are shared events
(``"moe:..."``), recorded in this class and waited for by ``SharedExperts`` in
``shared_experts.py`` (what overlaps with what is said there). The collectives
are CPU stand-ins with the same data flow (``ops.py``).

Idioms: manual_pipeline (events recorded on the main stream for another class's
side stream), container_returns (tuples of tensors).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import records

from .ops import token_combine, token_dispatch


class RoutedExperts(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    @records("moe:before_dispatch")
    def select_experts(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights, ids = self.gate(hidden_states).softmax(dim=-1).topk(self.top_k, dim=-1)
        return weights / weights.sum(dim=-1, keepdim=True), ids

    @records("moe:before_gmm2")
    def gmm1(self, rows: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
        gate, up = torch.bmm(rows.unsqueeze(1), self.w13[expert_ids]).squeeze(1).chunk(2, dim=-1)
        return F.silu(gate) * up

    @records("moe:before_combine")
    def gmm2(self, act: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
        return torch.bmm(act.unsqueeze(1), self.w2[expert_ids]).squeeze(1)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        topk_weights, topk_ids = self.select_experts(hidden_states)
        rows, expert_ids = token_dispatch(hidden_states, topk_ids, self.top_k)
        return token_combine(self.gmm2(self.gmm1(rows, expert_ids), expert_ids), topk_weights)
