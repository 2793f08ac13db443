"""DeepSeek-V3 MoE decode of omni-infer: gating, shared expert and five collectives on six named streams."""

from __future__ import annotations

import torch

IDIOMS = ("six_streams", "module_constants", "container_returns", "if_call", "side_to_side")
UPSTREAM = (
    "omni-ai-npu/omni-infer omni/models/deepseek/deepseek_v3_a2.py (DeepseekMoE.forward_decode; stream names "
    "STREAM_TOPK_COMPUTE, STREAM_SHARED_EXPERT, STREAM_TOPK_COMM, STREAM_INTERNODE_COMM_0/1/2)",
)
SEED = 106
SHAPE = {"hidden": 16, "inter": 8, "experts": 4, "top_k": 2, "large_batch": 6}


def build(multistream: bool = True):
    from .moe import DeepseekMoE

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekMoE(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import DeepseekMoE

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekMoE(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    """A small batch: the shared expert waits until the communication rounds are issued."""
    return (torch.randn(4, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)),)


def extra_inputs() -> list[tuple[object, ...]]:
    """A large batch: the shared expert starts before the communication."""
    return [(torch.randn(6, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED + 1)),)]
