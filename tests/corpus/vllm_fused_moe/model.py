"""The MoE block of a DeepSeek decoder layer (router, routed experts, shared expert).

Shaped after ``TorchairDeepseekV2MoE.forward`` (vllm-ascend
``vllm_ascend/torchair/models/torchair_deepseek_v2.py``): the shared expert module
is handed to the fused experts, which run its phases on the side stream in decode
and call it whole in prefill.

Idioms: phased_shared (the stream methods of ``shared_mlp.SharedMLP`` reached from
another file through a module argument), non_tensor_args (``is_prefill``).
"""

from __future__ import annotations

import torch
from torch import nn

from .fused_moe import FusedMoE
from .shared_mlp import SharedMLP


class DeepseekMoE(nn.Module):
    def __init__(self, hidden: int, inter: int, shared_inter: int, experts: int, top_k: int,
                 multistream: bool = True) -> None:
        super().__init__()
        self.routed_scaling_factor = 1.5
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.experts = FusedMoE(hidden, inter, experts, top_k, multistream)
        self.shared_experts = SharedMLP(hidden, shared_inter)

    def forward(self, hidden_states: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        router_logits = self.gate(hidden_states)
        routed, shared = self.experts(hidden_states, router_logits, is_prefill, shared_experts=self.shared_experts)
        return routed * self.routed_scaling_factor + shared
