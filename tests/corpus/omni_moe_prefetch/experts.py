"""The weights and CPU stand-ins of omni-infer's MoE decode path (no streams): used by the decorated model and its twin.

After ``DeepseekMoE._forward_decode_dispatch_combine`` in omni-infer
``omni/models/common/layers/moe/deepseek_moe.py`` (bf16 path): ``dispatch`` stands
in for ``npu_moe_distribute_dispatch`` (one row per token and chosen expert, with
the expert ids and per-expert counts, returned as a tuple upstream slices),
``grouped_matmul`` for ``npu_grouped_matmul``, ``combine`` for
``npu_moe_distribute_combine``. ``prefetch`` stands in for ``npu_prefetch(weight,
dependency, max_size)``: upstream warms the first bytes of a weight into the L2
cache once ``dependency`` is computed (a control edge in the graph); here it copies
the first ``max_size`` elements into the layer's ``l2`` buffer and reads one element
of ``dependency``, so that the order it asks for shows in the captured graph.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["MoEWeights", "combine", "dispatch", "grouped_matmul", "prefetch", "select_experts", "swiglu"]


def select_experts(router_logits: torch.Tensor, top_k: int, scaling: float) -> tuple[torch.Tensor, torch.Tensor]:
    weights, ids = router_logits.sigmoid().topk(top_k, dim=-1)
    return weights / weights.sum(dim=-1, keepdim=True) * scaling, ids


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


def prefetch(l2: torch.Tensor, weight: torch.Tensor, dependency: torch.Tensor, max_size: int) -> None:
    lines = weight.flatten()[: min(max_size, l2.numel())]
    l2[: lines.numel()].copy_(lines * dependency.flatten()[:1].isfinite())


class SharedMLP(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)


class MoEWeights(nn.Module):
    """The gate, the routed experts' stacked weights, the shared expert, and the layer's L2 stand-in."""

    def __init__(self, hidden: int, inter: int, shared_inter: int, experts: int, top_k: int, prefetch_kb: int,
                 attn_prefetch_kb: int) -> None:
        super().__init__()
        self.experts, self.top_k, self.routed_scaling_factor = experts, top_k, 2.5
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.w13_weight = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2_weight = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)
        self.shared_experts = SharedMLP(hidden, shared_inter)
        self.w13_prefetch_size, self.attn_prefetch_size = prefetch_kb, attn_prefetch_kb
        self.register_buffer("l2", torch.zeros(64))
