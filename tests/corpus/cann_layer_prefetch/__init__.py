"""Decoder layers that stage the next layer's weights on a side stream inside the layer loop."""

from __future__ import annotations

import torch

IDIOMS = ("loop_call", "try_finally", "deep")
UPSTREAM = (
    "hicann/cann-recipes-infer models/longcat_flash/models/modeling_longcat_flash.py (LongcatFlashModel.forward "
    "passes next_layer; the decoder layer prefetches next_layer's weights on npugraph_prefetch_stream)",
    "hicann/cann-recipes-infer models/deepseek_v3_2_exp/models/modeling_deepseek.py (per-layer cache offload on "
    "offload_cache.d2h_stream)",
    "omni-ai-npu/omni-infer omni/models/deepseek/deepseek_v3_a2.py (DeepseekMoE.chunked_gmm: the MoE in token chunks)",
)
SEED = 110
SHAPE = {"hidden": 8, "inter": 8, "tokens": 6, "chunk": 4}


def build(multistream: bool = True, layers: int = 3):
    from .model import PrefetchModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return PrefetchModel(**SHAPE, layers=layers, multistream=multistream)


def build_twin(layers: int = 3):
    from .twin import PrefetchModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return PrefetchModel(**SHAPE, layers=layers)


def example_inputs() -> tuple[object, ...]:
    return (torch.randn(SHAPE["tokens"], SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)),)
