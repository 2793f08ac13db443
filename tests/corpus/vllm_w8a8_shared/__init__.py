"""W8A8 DeepSeek MLP/MoE layers of vllm-ascend's torchair path, the quantized shared expert on "moe_secondary"."""

from __future__ import annotations

import torch

IDIOMS = ("one_line", "optional_star_static", "container_returns")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/torchair/quantization/torchair_w8a8_dynamic.py "
    "(TorchairAscendW8A8DynamicLinearMethod.apply with pertoken_scale; fused-experts apply with "
    "quantized_x_for_share/dynamic_scale_for_share; tree before 'Drop torchair' 835b4c8f)",
    "vllm-project/vllm-ascend vllm_ascend/torchair/ops/torchair_fused_moe.py (TorchairAscendFusedMoE.forward: "
    "npu_dynamic_quant for the shared expert on 'moe_secondary'; same tree)",
)
SEED = 108
SHAPE = {"hidden": 16, "inter": 8, "experts": 4, "top_k": 2}


def build(multistream: bool = True):
    from .model import W8A8Model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return W8A8Model(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import W8A8Model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return W8A8Model(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    return (torch.randn(5, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)),)
