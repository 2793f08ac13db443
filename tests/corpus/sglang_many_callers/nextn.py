"""A NextN (multi-token prediction) head whose draft-token top-k reuses the stream function under an alias.

Shaped after ``DeepseekModelNextN`` (sglang ``python/sglang/srt/models/deepseek_nextn.py``):
the token embedding and the previous hidden state are normalized, concatenated and
projected, then go through one MoE layer; the top draft tokens are picked from the
logits.

Idioms: many_callers (an aliased import of ``ops.fused_topk`` called from another class).
"""

from __future__ import annotations

import torch
from torch import nn

from .moe import DeepseekV2MoE
from .ops import fused_topk as select_topk


class NextNLayer(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, vocab: int, draft_topk: int,
                 dual_stream: bool) -> None:
        super().__init__()
        self.draft_topk, self.dual_stream = draft_topk, dual_stream
        self.enorm = nn.RMSNorm(hidden, eps=1e-6)
        self.hnorm = nn.RMSNorm(hidden, eps=1e-6)
        self.eh_proj = nn.Linear(2 * hidden, hidden, bias=False)
        self.mlp = DeepseekV2MoE(hidden, inter, experts, top_k, dual_stream)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_embeds: torch.Tensor, hidden_states: torch.Tensor):
        hidden_states = self.eh_proj(torch.cat([self.enorm(input_embeds), self.hnorm(hidden_states)], dim=-1))
        hidden_states = hidden_states + self.mlp(hidden_states)
        probs, tokens = select_topk(self.lm_head(hidden_states), self.draft_topk, False, self.dual_stream)
        return hidden_states, probs, tokens
