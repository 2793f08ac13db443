"""Weights stored quantized (no streams): int8 values kept in float, one scale per output row."""

from __future__ import annotations

import torch
from torch import nn


def quantized_weight(out_features: int, in_features: int) -> tuple[nn.Parameter, nn.Parameter]:
    weight = torch.randn(out_features, in_features) * in_features**-0.5
    scale = weight.abs().amax(dim=-1, keepdim=True) / 127
    return (nn.Parameter(torch.round(weight / scale), requires_grad=False),
            nn.Parameter(scale, requires_grad=False))
