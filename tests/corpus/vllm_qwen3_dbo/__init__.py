"""vllm-ascend's Qwen3-MoE dual-batch overlap: two micro-batches, their MoE all-to-alls on "communicate_stream"."""

from __future__ import annotations

import torch

IDIOMS = ("loop_call", "container_returns", "non_tensor_args", "config_when", "module_constants", "side_to_side")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/models/qwen3_dbo.py (Qwen3MoeDecoderLayerDBO."
    "_forward_ms_layer_alltoallv_finegrained: per micro-batch, attention and routing on the main stream, "
    "dispatch_alltoall/permute2 then the combine on ms_metadata.communicate_stream between MOE_BEFORE_COMM/"
    "MOE_AFTER_COMM and FFN_COM_FINISH/FFN_AR_FINISH; CustomQwen3DBOMoEModel._forward_ms_layers; tree 54020eca)",
    "vllm-project/vllm-ascend vllm_ascend/multistream/layers.py (MultiStreamPreTransformerLayer: split_micro_batch "
    "at ms_split.find_best_split_point; MultiStreamPostTransformerLayer: the FFN_AR_FINISH wait, merge_micro_batches;"
    " base.py MSEventKey, metadata.py MultiStreamStepMetadata)",
)
SEED = 233
SHAPE = {"hidden": 16, "moe_inter": 8, "experts": 4, "top_k": 2, "layers": 2}
SLOTS = 12


def build(multistream: bool = True):
    from .model import CustomQwen3DBOMoEModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return CustomQwen3DBOMoEModel(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import CustomQwen3DBOMoEModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return CustomQwen3DBOMoEModel(**SHAPE)


def _inputs(query_lens: tuple[int, ...], is_prefill: bool) -> tuple[object, ...]:
    tokens = sum(query_lens)
    g = torch.Generator().manual_seed(SEED + tokens)
    hidden_states = torch.randn(tokens, SHAPE["hidden"], generator=g)
    kv_cache = torch.zeros(SHAPE["layers"], 2, SLOTS, SHAPE["hidden"])
    slot_mapping = torch.randperm(SLOTS, generator=g)[:tokens]
    return hidden_states, kv_cache, slot_mapping, query_lens, is_prefill


def example_inputs() -> tuple[object, ...]:
    """A prefill batch of three requests, split into micro-batches of 3 and 5 tokens."""
    return _inputs((3, 2, 3), True)


def extra_inputs() -> list[tuple[object, ...]]:
    """A decode batch: not split (upstream's ``can_run_ms``), every call on the main stream."""
    return [_inputs((1, 1, 1), False)]
