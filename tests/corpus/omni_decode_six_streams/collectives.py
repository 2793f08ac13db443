"""CPU stand-ins for the collectives of a 4-node, 2-die decode (row permutations and sums, same shapes).

Plain functions without streams: the decorated model and its twin both use them.
"""

from __future__ import annotations

import torch


def dynamic_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_dynamic_quant``: int8 values (kept in float) and the per-token scale."""
    scale = x.abs().amax(dim=-1).clamp_min(1e-6) / 127
    return torch.round(x / scale.unsqueeze(-1)), scale


def all_gather_local(x: torch.Tensor) -> torch.Tensor:
    """All-gather over the two dies of a node."""
    return torch.cat([x, x.roll(1, dims=0)])


def all_gather_cross(x: torch.Tensor) -> torch.Tensor:
    """All-gather over the four nodes."""
    return torch.cat([x.roll(r, dims=0) for r in range(4)])


def reduce_scatter_local(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[0] // 2
    return x[:half] + x[half:].roll(-1, dims=0)


def swap(x: torch.Tensor, round_: int) -> torch.Tensor:
    """All-to-all with the partner node of one round."""
    return x.roll(round_ + 1, dims=0)
