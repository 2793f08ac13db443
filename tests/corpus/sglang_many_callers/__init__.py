"""sglang's dual-stream DeepSeek MoE plus a NextN (MTP) head: one top-k stream function, many callers."""

from __future__ import annotations

import torch

IDIOMS = ("many_callers", "container_returns", "non_tensor_args")
UPSTREAM = (
    "sgl-project/sglang python/sglang/srt/models/deepseek_v2.py (DeepseekV2MoE.forward_normal_dual_stream: "
    "routed experts on alt_stream, shared experts on the current stream)",
    "sgl-project/sglang python/sglang/srt/models/deepseek_nextn.py (DeepseekModelNextN: enorm/hnorm/eh_proj "
    "in front of a decoder layer)",
)
SEED = 109
SHAPE = {"hidden": 16, "inter": 8, "experts": 4, "top_k": 2, "vocab": 12, "draft_topk": 3}


def build(multistream: bool = True):
    from .model import DeepseekWithNextN

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekWithNextN(**SHAPE, dual_stream=multistream)


def build_twin():
    from .twin import DeepseekWithNextN

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekWithNextN(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    g = torch.Generator().manual_seed(SEED)
    return torch.randn(5, SHAPE["hidden"], generator=g), torch.randn(5, SHAPE["hidden"], generator=g)
