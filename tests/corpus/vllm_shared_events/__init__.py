"""vllm-ascend's eager shared+routed MoE: the routed path records events, the shared expert's phases wait on them."""

from __future__ import annotations

import torch

IDIOMS = ("manual_pipeline", "phased_shared", "container_returns", "module_constants")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/ops/fused_moe/fused_moe.py (AscendFusedMoE.shared_forward_impl, "
    "_forward_shared_experts with FusedMoEEvents: before_routed_experts, before_dispatch, before_gmm2, before_combine)",
    "vllm-project/vllm-ascend vllm_ascend/ops/fused_moe/moe_comm_method.py (the events recorded around dispatch, "
    "the second grouped matmul and combine)",
)
SEED = 113
SHAPE = {"hidden": 16, "inter": 8, "shared_inter": 8, "experts": 4, "top_k": 2}


def build(multistream: bool = True):
    from .model import MoEBlock

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return MoEBlock(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import MoEBlock

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return MoEBlock(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    return (torch.randn(5, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)),)
