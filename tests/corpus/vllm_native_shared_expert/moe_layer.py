"""The MoE layer that runs the routed experts and the shared expert, and sums them.

Shaped after vllm-ascend's ``AscendMoERunner`` path in
``vllm_ascend/ops/fused_moe/fused_moe.py`` with the shared expert of
``vllm_ascend/ops/fused_moe/shared_experts.py``: the routed path runs first on the
main stream (its events recorded in ``routed_experts.py``), then the shared expert
is issued on its stream (``shared_experts.py``), and the sum waits for the shared
stream through the shared event ``moe:shared_done``.

Idioms: manual_pipeline (the main stream waits for a shared event recorded by
another class's side stream).
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import after

from .routed_experts import RoutedExperts
from .shared_experts import SharedExperts


class MoELayer(nn.Module):
    def __init__(self, hidden: int, inter: int, shared_inter: int, experts: int, top_k: int,
                 multistream: bool = True) -> None:
        super().__init__()
        self.experts = RoutedExperts(hidden, inter, experts, top_k)
        self.shared_experts = SharedExperts(hidden, shared_inter, multistream)

    @after("moe:shared_done")
    def add_shared(self, routed_out: torch.Tensor, shared_out: torch.Tensor) -> torch.Tensor:
        return routed_out + shared_out

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        routed_out = self.experts(hidden_states)
        shared_out = self.shared_experts(hidden_states)
        return self.add_shared(routed_out, shared_out)
