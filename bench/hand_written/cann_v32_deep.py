"""The deep DeepSeek-V3.2 model by hand: per MoE layer one fork, one join and one ``record_stream``.

The shared expert reads the normalized ``h`` (made on the main stream) on stream
"11"; the routed experts read ``h`` last on the main stream and allocate before
the join, so ``h`` is kept for "11". A layer without a shared expert issues no
sync call at all.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import runtime

SOURCE = "corpus:cann_v32_deep"
USER_EVENTS = ()


def _shared(shared: nn.Module, h: torch.Tensor) -> torch.Tensor:
    gate, up = shared.gate_up_proj(h).chunk(2, dim=-1)
    return shared.down_proj(F.silu(gate) * up)


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _moe(self, moe: nn.Module, h: torch.Tensor) -> torch.Tensor:
        weights, ids = moe.gate(h).sigmoid().topk(self.m.top_k, dim=-1)
        if hasattr(moe, "shared_experts"):
            runtime.record("fork")
            with runtime.stream("11"):
                runtime.wait("fork")
                runtime.record_stream(h, "11")
                shared = _shared(moe.shared_experts, h)
                runtime.record("join")
        mask = h.new_zeros(h.shape[0], moe.w13.shape[0]).scatter(-1, ids, weights)
        gate, up = torch.einsum("th,ehi->eti", h, moe.w13).chunk(2, dim=-1)
        out = torch.einsum("eti,eih,te->th", F.silu(gate) * up, moe.w2, mask)
        if not hasattr(moe, "shared_experts"):
            return out
        runtime.wait("join")
        return out + shared

    def forward(self, x: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        for layer in self.m.layers:
            q, k, v = layer.qkv(layer.input_layernorm(x)).chunk(3, dim=-1)
            x = x + (q @ k.T * q.shape[-1] ** -0.5).softmax(dim=-1) @ v
            x = x + self._moe(layer.mlp, layer.post_attention_layernorm(x))
        return self.m.norm(x)
