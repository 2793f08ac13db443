"""The weights and CPU stand-ins of the MC2 MoE path (no streams): used by the decorated model and its twin.

After ``torchair_fused_experts_with_mc2`` in vllm-ascend
``vllm_ascend/torchair/ops/torchair_fused_moe.py``: ``dispatch`` stands in for
``npu_moe_distribute_dispatch`` (one row per token and chosen expert, returned
with the expert ids and per-expert token counts, as upstream returns a tuple it
slices), ``grouped_matmul`` for ``npu_grouped_matmul``, ``combine`` for
``npu_moe_distribute_combine``. ``MoEWeights`` holds the parameters.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def select_experts(router_logits: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    weights, ids = router_logits.softmax(dim=-1).topk(top_k, dim=-1)
    return weights / weights.sum(dim=-1, keepdim=True), ids


def dispatch(x: torch.Tensor, topk_ids: torch.Tensor, experts: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    ids = topk_ids.reshape(-1)
    return x.repeat_interleave(topk_ids.shape[-1], dim=0), ids, torch.bincount(ids, minlength=experts)


def grouped_matmul(rows: torch.Tensor, weights: torch.Tensor, expert_ids: torch.Tensor) -> torch.Tensor:
    return torch.bmm(rows.unsqueeze(1), weights[expert_ids]).squeeze(1)


def swiglu(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


def combine(rows: torch.Tensor, topk_weights: torch.Tensor) -> torch.Tensor:
    return (rows.view(*topk_weights.shape, -1) * topk_weights.unsqueeze(-1)).sum(dim=1)


class SharedMLP(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)


class MoEWeights(nn.Module):
    def __init__(self, hidden: int, inter: int, shared_inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.experts, self.top_k = experts, top_k
        self.post_attention_layernorm = nn.LayerNorm(hidden)
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)
        self.shared_experts = SharedMLP(hidden, shared_inter)
