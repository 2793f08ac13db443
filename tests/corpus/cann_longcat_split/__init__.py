"""LongCat-Flash decoder layers: the shortcut MoE on a side stream with 8/16 cores, the dense path on 16/32."""

from __future__ import annotations

import torch

IDIOMS = ("core_split", "non_tensor_args")
UPSTREAM = (
    "hicann/cann-recipes-infer models/longcat_flash/models/modeling_longcat_flash.py "
    "(LongcatFlashDecoderLayer.multi_stream_forward, LongcatFlashMoE; aic/aiv 8/16 and 16/32, superkernel_scope)",
)
SEED = 104
SHAPE = {"hidden": 16, "inter": 16, "experts": 4, "zero_experts": 2, "top_k": 2}


def build(multistream: bool = True, layers: int = 2):
    from .layer import LongcatFlashModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return LongcatFlashModel(**SHAPE, layers=layers, multistream=multistream)


def build_twin(layers: int = 2):
    from .twin import LongcatFlashModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return LongcatFlashModel(**SHAPE, layers=layers)


def example_inputs() -> tuple[object, ...]:
    return torch.randn(5, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)), False
