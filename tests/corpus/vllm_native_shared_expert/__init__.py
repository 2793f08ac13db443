"""vllm-ascend's native-stream shared expert, waiting for events that the routed-expert path records in another file."""

from __future__ import annotations

import torch

IDIOMS = ("phased_shared", "manual_pipeline", "module_constants", "container_returns")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/ops/fused_moe/shared_experts.py (AscendSharedExperts.forward, part1, "
    "part2: the shared-experts stream waits for FusedMoEEvents before_dispatch, before_gmm2, before_combine)",
    "vllm-project/vllm-ascend vllm_ascend/ops/fused_moe/moe_comm_method.py (fused_experts: the routed path "
    "records before_dispatch before token_dispatch and before_combine before token_combine; _apply_mlp "
    "returns before_gmm2)",
)
NEEDS = ()
SEED = 131
SHAPE = {"hidden": 16, "inter": 8, "shared_inter": 12, "experts": 4, "top_k": 2}
TOKENS = 6


def build(multistream: bool = True):
    from .moe_layer import MoELayer

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return MoELayer(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import MoELayer

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return MoELayer(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    return (torch.randn(TOKENS, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)),)
