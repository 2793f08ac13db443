"""The sizes and inputs every overlap pair shares (``overlap_pairs.py``).

Matmuls big enough to dominate the cost model of ``npudsl schedule``, so that what one stream overlaps shows in the
saving; seeded inputs, so that the automatic and the hand-placed side compute equal numbers. Each pair's file builds
its layers itself (``_linear``); a factory imported from another module of the run would do as well (the transformer
reads the class it makes: ``codegen/index/factory_made.py``).
"""

from __future__ import annotations

import torch

__all__ = ["H", "T", "sample"]

H = 512  # hidden size: big enough that matmuls dominate the cost model
T = 64  # tokens


def sample(seed: int = 1) -> torch.Tensor:
    """``T`` tokens of hidden size ``H``, the same for a seed in every run."""
    return torch.randn(T, H, generator=torch.Generator().manual_seed(seed))
