"""LongCat-Flash's shortcut-connected MoE, decorated as a whole: side stream "moe" with 8 cube / 16 vector cores.

Shaped after ``LongcatFlashMoE`` and its call in ``LongcatFlashDecoderLayer.multi_stream_forward``
(cann-recipes-infer ``models/longcat_flash/models/modeling_longcat_flash.py``): routed
experts plus zero-computation experts (identity experts that return their input),
computed densely here so that results are deterministic. Upstream also opens a
``superkernel_scope`` around the call; npudsl has no decorator for it.

Idioms: core_split (the side half: ``@core_limit(8, 16)`` on a stream class, called from
``layer.py``), non_tensor_args (``is_prefill: bool``, an optional ``cur_topk_list``).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import core_limit, keep_output, on_stream


@on_stream("moe", when="self.enable_multi_streams")
@core_limit(8, 16, when="self.enable_multi_streams")
@keep_output
class LongcatFlashMoE(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, zero_experts: int, top_k: int,
                 multistream: bool = True) -> None:
        super().__init__()
        self.enable_multi_streams = multistream
        self.experts, self.top_k = experts, top_k
        self.classifier = nn.Linear(hidden, experts + zero_experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, hidden_states: torch.Tensor, is_prefill: bool, cur_topk_list: torch.Tensor | None = None):
        weights, ids = self.classifier(hidden_states).softmax(dim=-1).topk(self.top_k, dim=-1)
        if cur_topk_list is not None:
            ids = cur_topk_list
        mask = hidden_states.new_zeros(hidden_states.shape[0], self.classifier.out_features).scatter(-1, ids, weights)
        gate, up = torch.einsum("th,ehi->eti", hidden_states, self.w13).chunk(2, dim=-1)
        routed = torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.w2, mask[:, : self.experts])
        return routed + hidden_states * mask[:, self.experts :].sum(dim=-1, keepdim=True)
