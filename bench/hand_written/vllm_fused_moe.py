"""vllm-ascend's torchair fused MoE by hand: the three shared phases in one block, one join.

The shared expert reads only the layer input and its own phases' results, and its
three phases need no block each: on the side stream they run one after the other
whatever the main stream issues between them. The main stream waits once, before
the sum; nothing is allocated on the side stream afterwards: no ``record_stream``
of its results. The layer input, when a caller makes it (``bench.sync_premise``),
needs a fork (recorded as the forward starts) and a ``record_stream``: the main
stream drops it after the routed rows and allocates before the join. As a graph
input it is ready on every stream and alive throughout: neither is needed.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from bench.sync_premise import from_caller
from npudsl import runtime

SOURCE = "corpus:vllm_fused_moe"
USER_EVENTS = ()


def _swiglu(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def forward(self, x: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        m, shared = self.m, self.m.shared_experts
        if from_caller():
            runtime.record("fork")
        weights, ids = m.gate(x).softmax(dim=-1).topk(m.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        with runtime.stream("moe_secondary"):
            if from_caller():
                runtime.wait("fork")
                runtime.record_stream(x, "moe_secondary")
            shared_out = F.linear(_swiglu(F.linear(x, shared.gate_up_proj.weight)), shared.down_proj.weight)
            runtime.record("join")
        rows, expert_ids = x.repeat_interleave(m.top_k, dim=0), ids.reshape(-1)
        hidden = _swiglu(torch.bmm(rows.unsqueeze(1), m.experts.w13[expert_ids]).squeeze(1))
        out = torch.bmm(hidden.unsqueeze(1), m.experts.w2[expert_ids]).squeeze(1)
        routed = (out.view(*weights.shape, -1) * weights.unsqueeze(-1)).sum(dim=1)
        runtime.wait("join")
        return routed * 1.5 + shared_out
