"""vllm-ascend's W8A8 shared expert by hand: per layer one block for the whole shared expert, a fork and a join.

The shared expert (quantize, gate/up, activation, down) reads ``h`` (made on the
main stream) and then only its own results: one block after one fork. The
routed experts of the second layer read ``h`` last on the main stream and
allocate before the join, so there ``h`` is kept for the side stream; the dense
first layer waits for the join right away, so its ``h`` needs nothing.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import runtime

SOURCE = "corpus:vllm_w8a8_shared"
USER_EVENTS = ()
SIDE = "moe_secondary"


def _routed(layer: nn.Module, h: torch.Tensor, top_k: int) -> torch.Tensor:
    weights, ids = layer.gate(h).softmax(dim=-1).topk(top_k, dim=-1)
    mask = h.new_zeros(h.shape[0], layer.w13.shape[0]).scatter(-1, ids, weights)
    gate, up = torch.einsum("th,ehi->eti", h, layer.w13).chunk(2, dim=-1)
    return torch.einsum("eti,eih,te->th", F.silu(gate) * up, layer.w2, mask)


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.m.layers):
            h = F.rms_norm(x, (x.shape[-1],))
            runtime.record("fork")
            with runtime.stream(SIDE):
                runtime.wait("fork")
                if i > 0:
                    runtime.record_stream(h, SIDE)
                shared = layer.shared_experts(h)
                runtime.record("join")
            out = _routed(layer, h, self.m.top_k) if i > 0 else None
            runtime.wait("join")
            x = x + (shared if out is None else out + shared)
        return x
