"""LongCat-Flash-Lite's split cores by hand: per layer one fork, one join and one ``record_stream``.

The routed MoE reads ``normed`` on the "moe" stream at 8/16 cores while the main
stream runs the second sub-layer at 16/32 (the counts the config names); the
main stream reads ``normed`` last and allocates before the join, so ``normed`` is
kept for "moe". The MoE result needs none: "moe" allocates next after the next
layer's fork, itself after the sum that read it.
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import runtime

SOURCE = "corpus:cann_longcat_lite_cores"
USER_EVENTS = ()


def _moe(layer: nn.Module, normed: torch.Tensor, top_k: int) -> torch.Tensor:
    weights, ids = layer.router(normed).softmax(dim=-1).topk(top_k, dim=-1)
    gates = normed.new_zeros(normed.shape[0], len(layer.experts)).scatter(-1, ids, weights)
    return sum(expert(normed) * gates[:, e : e + 1] for e, expert in enumerate(layer.experts))


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def forward(self, x: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        for layer in self.m.layers:
            residual = x + layer.attention(0, layer.norms[0](x))
            normed = layer.norms[1](residual)
            runtime.record("fork")
            with runtime.stream("moe"), runtime.core_limit(8, 16):
                runtime.wait("fork")
                runtime.record_stream(normed, "moe")
                moe = _moe(layer, normed, self.m.top_k)
                runtime.record("join")
            with runtime.core_limit(16, 32):
                residual = residual + layer.mlps[0](normed)
                residual = residual + layer.attention(1, layer.norms[2](residual))
                hidden = layer.mlps[1](layer.norms[3](residual))
            runtime.wait("join")
            x = residual + hidden + moe
        return x
