"""vllm-ascend's torchair (GE) fused MoE on the MC2 path, with its three ``npu_wait_tensor`` edges, ported."""

from __future__ import annotations

import torch

IDIOMS = ("phased_shared", "module_constants", "container_returns")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/torchair/ops/torchair_fused_moe.py (torchair_fused_experts_with_mc2: "
    "the shared expert on 'moe_secondary' around dispatch, the grouped matmuls and combine, three npu_wait_tensor; "
    "tree before 'Drop torchair' 835b4c8f)",
)
SEED = 151
SHAPE = {"hidden": 16, "inter": 8, "shared_inter": 12, "experts": 4, "top_k": 2}
TOKENS = 5


def build(multistream: bool = True):
    from .fused_moe import FusedMoEMC2

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return FusedMoEMC2(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import FusedMoEMC2

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return FusedMoEMC2(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    return (torch.randn(TOKENS, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)),)
