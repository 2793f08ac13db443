"""The routed experts, decorated as a whole class: the MoE's routed branch on the "alt" stream.

Shaped after ``DeepseekV2MoE._forward_router_experts`` under ``torch.cuda.stream(self.alt_stream)``
(sglang ``python/sglang/srt/models/deepseek_v2.py``; the NPU models use the same
dual-stream shape with ``torch.npu.stream``).

Idioms: many_callers (built as ``experts.RoutedExperts(...)`` in ``model.py``; calls
``ops.fused_topk`` through a lambda, a nested call on the same stream).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream

from . import ops


@on_stream("alt", when="self.dual_stream")
@keep_output
class RoutedExperts(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, dual_stream: bool = True) -> None:
        super().__init__()
        self.top_k, self.dual_stream = top_k, dual_stream
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        select = lambda logits: ops.fused_topk(logits, self.top_k, True, self.dual_stream)
        weights, ids = select(self.gate(hidden_states))
        mask = hidden_states.new_zeros(hidden_states.shape[0], self.w13.shape[0]).scatter(-1, ids, weights)
        gate, up = torch.einsum("th,ehi->eti", hidden_states, self.w13).chunk(2, dim=-1)
        return torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.w2, mask)
