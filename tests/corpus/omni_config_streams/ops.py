"""Gating and the top-k all-gather as module-level stream functions guarded by global configuration.

Shaped after the ``moe_multi_stream_tune`` branch of ``DeepseekMoE.forward_normal``
(omni-infer ``omni/models/deepseek/deepseek_v3_a2.py``): the router and top-k run on
stream "22", the packed top-k is all-gathered on "23", and "22" splits the gathered
result. The callers are in ``moe.py``.

Idioms: config_when (``when="config.MULTISTREAM"`` with ``config`` a module imported
here; ``when="model_extra_config.operator_opt_config.moe_multi_stream_tune"`` with an
imported object), side_to_side ("23" reads what "22" made, then "22" reads what "23"
made), module_constants, non_tensor_args (a module argument, ``top_k: int``).
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import keep_output, on_stream

from . import config  # read by the when= guards below
from .config import model_extra_config  # likewise

STREAM_GATE = "22"
STREAM_TOPK_GATHER = "23"


def all_gather_two_stage(x: torch.Tensor) -> torch.Tensor:
    """CPU stand-in for the two-stage all-gather over two ranks."""
    return torch.cat([x, x.roll(1, dims=0)])


@on_stream(STREAM_GATE, when="config.MULTISTREAM")
@keep_output
def gate_topk(gate: nn.Module, hidden_states: torch.Tensor, pertoken_scale: torch.Tensor, top_k: int) -> torch.Tensor:
    weights, ids = gate(hidden_states).softmax(dim=-1).topk(top_k, dim=-1)
    return torch.cat((weights, ids.float(), pertoken_scale.unsqueeze(-1)), dim=-1)


@on_stream(STREAM_TOPK_GATHER, when="model_extra_config.operator_opt_config.moe_multi_stream_tune")
@keep_output
def gather_topk(topk_cat: torch.Tensor) -> torch.Tensor:
    return all_gather_two_stage(topk_cat)


@on_stream(STREAM_GATE, when="config.MULTISTREAM")
@keep_output
def split_topk(topk_all: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    weights, ids, scale = topk_all.split([top_k, top_k, 1], dim=-1)
    return weights, torch.round(ids).long(), scale.squeeze(-1)
