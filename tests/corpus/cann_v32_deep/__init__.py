"""A deep DeepSeek-V3.2 decoder: every layer's shared expert on the one stream "11"."""

from __future__ import annotations

import torch

IDIOMS = ("deep", "module_constants", "if_call")
UPSTREAM = (
    "hicann/cann-recipes-infer models/deepseek-v3.2-exp/models/modeling_deepseek.py (DeepseekV3MoE.forward at "
    "07067b7: shared experts on stream '11', moe_npu_events created once at module level for all layers)",
)
SEED = 112
SHAPE = {"hidden": 8, "inter": 8, "experts": 4, "top_k": 2}


def build(multistream: bool = True, layers: int = 4):
    from .model import DeepseekModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekModel(**SHAPE, layers=layers, multistream=multistream)


def build_twin(layers: int = 4):
    from .twin import DeepseekModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekModel(**SHAPE, layers=layers)


def example_inputs() -> tuple[object, ...]:
    return torch.randn(3, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)), False
