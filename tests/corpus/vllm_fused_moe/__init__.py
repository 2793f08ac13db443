"""DeepSeek MoE layer with the phased shared expert of vllm-ascend's torchair MC2 path."""

from __future__ import annotations

import torch

IDIOMS = ("phased_shared", "if_call", "container_returns", "non_tensor_args")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/torchair/ops/torchair_fused_moe.py (torchair_fused_experts_with_mc2, "
    "TorchairAscendFusedMoE.forward; tree before 'Drop torchair' 835b4c8f)",
    "vllm-project/vllm-ascend vllm_ascend/torchair/models/torchair_deepseek_v2.py (TorchairDeepseekV2MoE, "
    "TorchairDeepseekV2MLP; same tree)",
)
SEED = 101
SHAPE = {"hidden": 16, "inter": 8, "shared_inter": 8, "experts": 4, "top_k": 2}


def build(multistream: bool = True):
    from .model import DeepseekMoE

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekMoE(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import DeepseekMoE

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekMoE(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    hidden = torch.randn(6, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED))
    return hidden, False
