"""CPU stand-ins for the world collectives of a two-rank prefill, and small shared math.

Plain functions without streams: the decorated model and its twin both use them.
"""

from __future__ import annotations

import torch


def all_gather_world(x: torch.Tensor) -> torch.Tensor:
    return torch.cat([x, x.roll(1, dims=0)])


def reduce_scatter_world(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[0] // 2
    return x[:half] + x[half:].roll(-1, dims=0)


def dynamic_quant(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """``npu_dynamic_quant``, packed the way omni-infer hands quantized activations around."""
    scale = x.abs().amax(dim=-1).clamp_min(1e-6) / 127
    return {"x_int8": torch.round(x / scale.unsqueeze(-1)), "pertoken_scale": scale}


def dequant(quant: dict[str, torch.Tensor]) -> torch.Tensor:
    return quant["x_int8"] * quant["pertoken_scale"].unsqueeze(-1)


def rope(positions: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    angles = positions.float().unsqueeze(-1) / 10000 ** (torch.arange(dim) % (dim // 2) / dim)
    return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin
