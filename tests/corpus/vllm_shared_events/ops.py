"""Stand-ins for the NPU kernels and int8 weights of the W8A8 MoE path (no streams).

After the ops called by vllm-ascend ``vllm_ascend/ops/fused_moe/fused_moe.py`` and
``moe_comm_method.py`` (``npu_dynamic_quant``, ``npu_quant_matmul``,
``npu_dequant_swiglu_quant``, the MC2 dispatch and combine); int8 values are kept in
float tensors.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def dynamic_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-6) / 127
    return torch.round(x / scale), scale


def dequant_swiglu_quant(x: torch.Tensor, weight_scale: torch.Tensor,
                         activation_scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    gate, up = (x * weight_scale * activation_scale).chunk(2, dim=-1)
    return dynamic_quant(F.silu(gate) * up)


def dispatch(x: torch.Tensor, topk_ids: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    return x.repeat_interleave(top_k, dim=0), topk_ids.reshape(-1)


def combine(rows: torch.Tensor, topk_weights: torch.Tensor) -> torch.Tensor:
    return (rows.view(*topk_weights.shape, -1) * topk_weights.unsqueeze(-1)).sum(dim=1)


class QuantLinear(nn.Module):
    """Int8 weights (kept in float) with a per-output-channel scale."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        weight = torch.randn(out_features, in_features) * in_features**-0.5
        scale = weight.abs().amax(dim=-1) / 127
        self.weight = nn.Parameter(torch.round(weight / scale.unsqueeze(-1)), requires_grad=False)
        self.weight_scale = nn.Parameter(scale, requires_grad=False)
