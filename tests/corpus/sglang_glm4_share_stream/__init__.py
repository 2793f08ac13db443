"""sglang's GLM-4 MoE on Ascend: the shared expert on "share_stream" at 8/16 cores beside the routed path."""

from __future__ import annotations

import torch

IDIOMS = ("param_when", "non_tensor_args", "module_constants", "inplace_side_output")
UPSTREAM = (
    "sgl-project/sglang python/sglang/srt/models/glm4_moe.py (Glm4MoeSparseMoeBlock.forward_deepep: the gate, "
    "then process_shared_expert on the NPU when the batch extends and SGLANG_NPU_USE_MULTI_STREAM is set, "
    "top-k and the routed experts on the main stream, wait_share_stream, shared_output.add_)",
    "sgl-project/sglang python/sglang/srt/hardware_backend/npu/utils.py (share_stream, set_share_stream with "
    "set_stream_limit(share_stream, CORE_NUM_FOR_SHARE = 8, 16), process_shared_expert, wait_share_stream)",
)
SEED = 171
SHAPE = {"hidden": 16, "inter": 16, "moe_inter": 8, "shared_experts": 1, "experts": 8, "top_k": 2, "n_group": 2,
         "topk_group": 1, "routed_scaling_factor": 2.5, "layers": 3, "first_k_dense": 1}
TOKENS, SLOTS = 6, 10


def build(multistream: bool = True):
    from .model import Glm4MoeModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return Glm4MoeModel(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import Glm4MoeModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return Glm4MoeModel(**SHAPE)


def _inputs(is_extend: bool, tokens: int) -> tuple[object, ...]:
    g = torch.Generator().manual_seed(SEED + tokens)
    hidden_states = torch.randn(tokens, SHAPE["hidden"], generator=g)
    kv_cache = torch.zeros(SHAPE["layers"], 2, SLOTS, SHAPE["hidden"])
    out_cache_loc = torch.randperm(SLOTS, generator=g)[:tokens]
    return hidden_states, kv_cache, out_cache_loc, is_extend


def example_inputs() -> tuple[object, ...]:
    """An extend batch: the shared expert goes to "share_stream"."""
    return _inputs(True, TOKENS)


def extra_inputs() -> list[tuple[object, ...]]:
    """A decode batch: upstream's flag is off, every call stays on the main stream."""
    return [_inputs(False, 3)]
