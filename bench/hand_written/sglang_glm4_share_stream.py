"""GLM-4 MoE's shared expert by hand: per sparse layer one fork, one block at 8/16 cores, one ``record_stream``, one join.

The shared expert reads the layer's ``hidden_states`` (made on the main stream)
on "share_stream" at 8/16 cores, as sglang's ``process_shared_expert`` does after its
``wait_stream(current_stream())``; the main stream goes on with the top-k and the routed experts,
which allocate before the join, so ``hidden_states`` is kept for "share_stream".
The join comes where upstream's ``wait_share_stream()`` is: before the shared
output is updated in place on the main stream. The shared output needs no
``record_stream``: the next allocation on "share_stream" is after the next fork,
itself after the update. A decode batch (``is_extend`` false) runs on one stream.
"""

from __future__ import annotations

import torch
from torch import nn

from corpus.sglang_glm4_share_stream.layers import grouped_topk
from npudsl import runtime

SOURCE = "corpus:sglang_glm4_share_stream"
USER_EVENTS = ()
SHARE = "share_stream"


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _moe(self, moe: nn.Module, x: torch.Tensor, dual_stream: bool) -> torch.Tensor:
        m = self.m
        router_logits = moe.gate(x)
        if dual_stream:
            runtime.record("fork")
            with runtime.stream(SHARE), runtime.core_limit(8, 16):
                runtime.wait("fork")
                runtime.record_stream(x, SHARE)
                shared = moe.shared_experts(x)
                runtime.record("join")
        else:
            shared = moe.shared_experts(x)
        weights, ids = grouped_topk(router_logits, moe.gate.e_score_correction_bias, m.top_k, m.n_group, m.topk_group)
        routed = moe.experts(x, weights, ids)
        if dual_stream:
            runtime.wait("join")
        return shared.add_(routed, alpha=m.scale)

    def forward(self, x: torch.Tensor, kv_cache: torch.Tensor, out_cache_loc: torch.Tensor,
                is_extend: bool = True) -> torch.Tensor:
        m, residual = self.m, None
        for i, layer in enumerate(m.layers):
            x, residual = layer.input_layernorm(x, residual)
            x, residual = layer.post_attention_layernorm(layer.self_attn(x, kv_cache[i], out_cache_loc), residual)
            x = self._moe(layer.mlp, x, is_extend) if hasattr(layer.mlp, "gate") else layer.mlp(x)
        return m.norm(x, residual)[0]
