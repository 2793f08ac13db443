"""sglang's DeepSeek MoE and NextN head by hand: the routed experts on "alt" beside the shared expert.

Per MoE (the layer's and the NextN head's): the routed experts, their top-k
included, are one block on "alt" reading ``x`` (made on the main stream): one
fork; in the layer's MoE the shared expert reads ``x`` last on the main stream and
allocates before the join, so ``x`` is kept for "alt" (the head's ``x`` is read again
by the sum after the join: nothing to keep); one join before the sum. The draft top-k
runs on "alt" after one more fork (its logits come from the main stream); its
results are returned, never read by another stream: no join, and as graph inputs
no ``record_stream`` (nothing is allocated on the main stream after it). Called
from a caller that goes on (``bench.sync_premise``), the caller allocates while
"alt" may still read ``logits``: it is kept for "alt".
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from bench.sync_premise import from_caller
from npudsl import runtime

SOURCE = "corpus:sglang_many_callers"
USER_EVENTS = ()


def _routed(moe: nn.Module, x: torch.Tensor) -> torch.Tensor:
    routed = moe.experts
    weights, ids = routed.gate(x).softmax(dim=-1).topk(moe.top_k, dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    mask = x.new_zeros(x.shape[0], routed.w13.shape[0]).scatter(-1, ids, weights)
    gate, up = torch.einsum("th,ehi->eti", x, routed.w13).chunk(2, dim=-1)
    return torch.einsum("eti,eih,te->th", F.silu(gate) * up, routed.w2, mask)


def _moe(moe: nn.Module, x: torch.Tensor, keep: bool) -> torch.Tensor:
    runtime.record("fork")
    with runtime.stream("alt"):
        runtime.wait("fork")
        if keep:
            runtime.record_stream(x, "alt")
        out = _routed(moe, x)
        runtime.record("join")
    shared = moe.shared_experts
    gate, up = shared.gate_up_proj(x).chunk(2, dim=-1)
    shared_out = shared.down_proj(F.silu(gate) * up)
    runtime.wait("join")
    return out * 2.5 + shared_out


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def forward(self, x: torch.Tensor, embeds: torch.Tensor):
        m, head = self.m, self.m.nextn
        x = x + _moe(m.mlp, m.norm(x), keep=True)
        x = head.eh_proj(torch.cat([head.enorm(embeds), head.hnorm(x)], dim=-1))
        x = x + _moe(head.mlp, x, keep=False)  # x is read again after the join: nothing to keep
        logits = head.lm_head(x)
        runtime.record("fork")
        with runtime.stream("alt"):
            runtime.wait("fork")
            if from_caller():
                runtime.record_stream(logits, "alt")
            probs, tokens = logits.softmax(dim=-1).topk(m.draft_topk, dim=-1)
        return x, probs, tokens
