"""One DeepSeek MoE layer followed by the NextN head (the two callers of the routed stream class).

Idioms: many_callers (``moe.DeepseekV2MoE`` is used here and inside ``nextn.NextNLayer``).
"""

from __future__ import annotations

import torch
from torch import nn

from .moe import DeepseekV2MoE
from .nextn import NextNLayer


class DeepseekWithNextN(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, vocab: int, draft_topk: int,
                 dual_stream: bool = True) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(hidden, eps=1e-6)
        self.mlp = DeepseekV2MoE(hidden, inter, experts, top_k, dual_stream)
        self.nextn = NextNLayer(hidden, inter, experts, top_k, vocab, draft_topk, dual_stream)

    def forward(self, hidden_states: torch.Tensor, input_embeds: torch.Tensor):
        hidden_states = hidden_states + self.mlp(self.norm(hidden_states))
        return self.nextn(input_embeds, hidden_states)
