"""LongCat-Flash's split cores by hand: per layer one fork, one join and one ``record_stream``.

The MoE reads ``normed`` (made on the main stream) on the "moe" stream at 8/16
cores while the dense path runs on the main stream at 16/32; the dense path reads
``normed`` last and allocates before the join, so ``normed`` is kept for "moe".
The MoE result needs none: the next allocation on "moe" comes after the next
fork, itself after the sum that read it.
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import runtime

SOURCE = "corpus:cann_longcat_split"
USER_EVENTS = ()


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _dense(self, layer: nn.Module, normed: torch.Tensor, residual: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h, residual = layer.input_layernorm[1](layer.mlps[0](normed), residual)
        h, residual = layer.post_attention_layernorm[1](layer.self_attn[1](h), residual)
        return layer.mlps[1](h), residual

    def forward(self, x: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        residual = None
        for layer in self.m.layers:
            x, residual = layer.input_layernorm[0](x, residual)
            normed, residual = layer.post_attention_layernorm[0](layer.self_attn[0](x), residual)
            runtime.record("fork")
            with runtime.stream("moe"), runtime.core_limit(8, 16):
                runtime.wait("fork")
                runtime.record_stream(normed, "moe")
                moe_out = self.m._moe(layer.mlp, normed)
                runtime.record("join")
            with runtime.core_limit(16, 32):
                dense, residual = self._dense(layer, normed, residual)
            runtime.wait("join")
            x = dense + moe_out
        return self.m.norm(x, residual)[0]
