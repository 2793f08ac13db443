"""The shared experts, decorated as a class: all layers share the stream ``SHARED_EXPERT_STREAM``.

Shaped after the shared-expert branch of ``DeepseekV3MoE.forward`` (cann-recipes-infer
``models/deepseek-v3.2-exp/models/modeling_deepseek.py``), which switches to stream
"11" for decode and synchronizes with two tagged events created once at module
level (one stream and one pair of events for every layer: tags are process-global).

Idioms: module_constants (the stream tag), deep (one stream per role, whatever the depth).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream

SHARED_EXPERT_STREAM = "11"


@on_stream(SHARED_EXPERT_STREAM, when="self.enable_multi_streams")
@keep_output
class SharedExperts(nn.Module):
    def __init__(self, hidden: int, inter: int, multistream: bool) -> None:
        super().__init__()
        self.enable_multi_streams = multistream
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(hidden_states).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)
