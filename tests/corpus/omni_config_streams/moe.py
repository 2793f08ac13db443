"""The MoE decode block that calls the configuration-guarded stream functions of :mod:`.ops`.

Shaped after ``DeepseekMoE.forward_normal`` (omni-infer ``omni/models/deepseek/deepseek_v3_a2.py``):
the int8 tokens are all-gathered on the main stream while the gating runs on "22";
the shared expert runs on "21" (a method guarded by ``self.use_shared_stream``).

Idioms: config_when (the callers, in another file than the guards' ``config``;
``when="self.x"`` on a method).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream

from . import ops


def dynamic_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scale = x.abs().amax(dim=-1).clamp_min(1e-6) / 127
    return torch.round(x / scale.unsqueeze(-1)), scale


class DeepseekMoE(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, use_shared_stream: bool = True) -> None:
        super().__init__()
        self.top_k, self.use_shared_stream = top_k, use_shared_stream
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.shared_gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.shared_down = nn.Linear(inter, hidden, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    @on_stream("21", when="self.use_shared_stream")
    @keep_output
    def shared_experts(self, hidden_states: torch.Tensor) -> torch.Tensor:
        gate, up = self.shared_gate_up(hidden_states).chunk(2, dim=-1)
        return self.shared_down(F.silu(gate) * up)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states_int8, pertoken_scale = dynamic_quant(hidden_states)
        global_hidden_states = ops.all_gather_two_stage(hidden_states_int8)
        topk_cat = ops.gate_topk(self.gate, hidden_states, pertoken_scale, self.top_k)
        shared_output = self.shared_experts(hidden_states)
        topk_all = ops.gather_topk(topk_cat)
        topk_weights, topk_ids, global_pertoken_scale = ops.split_topk(topk_all, self.top_k)
        rows = global_hidden_states * global_pertoken_scale.unsqueeze(-1)
        mask = rows.new_zeros(rows.shape[0], self.w13.shape[0]).scatter(-1, topk_ids, topk_weights)
        gate, up = torch.einsum("th,ehi->eti", rows, self.w13).chunk(2, dim=-1)
        routed = torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.w2, mask)
        half = routed.shape[0] // 2
        return routed[:half] + routed[half:].roll(-1, dims=0) + shared_output
