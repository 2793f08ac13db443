"""sglang's DeepSeek MoE in dual-stream form: shared experts on the main stream, routed ones on "alt".

Shaped after ``DeepseekV2MoE.forward_normal_dual_stream`` (sglang
``python/sglang/srt/models/deepseek_v2.py``): the routed branch is issued first on the
alternate stream, the shared experts run on the current stream meanwhile, and the
two are summed after the routed output is scaled.

Idioms: many_callers (the ``module.Class()`` spelling: ``experts.RoutedExperts``).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from . import experts


class SharedExperts(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class DeepseekV2MoE(nn.Module):
    def __init__(self, hidden: int, inter: int, experts_: int, top_k: int, dual_stream: bool = True) -> None:
        super().__init__()
        self.routed_scaling_factor = 2.5
        self.experts = experts.RoutedExperts(hidden, inter, experts_, top_k, dual_stream)
        self.shared_experts = SharedExperts(hidden, inter)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        final_hidden_states = self.experts(hidden_states)
        shared_output = self.shared_experts(hidden_states)
        return final_hidden_states * self.routed_scaling_factor + shared_output
