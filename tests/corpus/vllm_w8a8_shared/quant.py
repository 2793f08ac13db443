"""W8A8 dynamic quantization stand-ins (no streams): int8 values are kept in float tensors.

Shaped after ``TorchairAscendW8A8DynamicLinearMethod.apply`` (vllm-ascend
``vllm_ascend/torchair/quantization/torchair_w8a8_dynamic.py``): a linear layer takes
either a float activation, quantized on the fly, or an already quantized one with
its per-token scale.
"""

from __future__ import annotations

import torch
from torch import nn


def dynamic_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-6) / 127
    return torch.round(x / scale), scale


class W8A8Linear(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        weight = torch.randn(out_features, in_features) * in_features**-0.5
        scale = weight.abs().amax(dim=-1) / 127
        self.weight = nn.Parameter(torch.round(weight / scale.unsqueeze(-1)), requires_grad=False)
        self.weight_scale = nn.Parameter(scale, requires_grad=False)

    def forward(self, x: torch.Tensor, pertoken_scale: torch.Tensor | None = None) -> torch.Tensor:
        if pertoken_scale is None:
            x, pertoken_scale = dynamic_quant(x)
        return (x @ self.weight.T) * self.weight_scale * pertoken_scale.reshape(-1, 1)
