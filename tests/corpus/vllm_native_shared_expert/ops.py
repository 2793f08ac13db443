"""CPU stand-ins for the token dispatch and combine collectives of the routed path (no streams).

After ``token_dispatch`` / ``token_combine`` called from vllm-ascend
``vllm_ascend/ops/fused_moe/moe_comm_method.py``: dispatch repeats each token once
per chosen expert, combine sums the rows back with the routing weights.
"""

from __future__ import annotations

import torch


def token_dispatch(x: torch.Tensor, topk_ids: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    return x.repeat_interleave(top_k, dim=0), topk_ids.reshape(-1)


def token_combine(rows: torch.Tensor, topk_weights: torch.Tensor) -> torch.Tensor:
    return (rows.view(*topk_weights.shape, -1) * topk_weights.unsqueeze(-1)).sum(dim=1)
