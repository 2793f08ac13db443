"""cann-recipes-infer's DeepSeek-R1 prefill micro-batches: each one's MoE dispatch and combine on "stream1"."""

from __future__ import annotations

import torch

IDIOMS = ("loop_call", "container_returns", "non_tensor_args", "module_constants", "optional_star_static",
          "config_when")
UPSTREAM = (
    "hicann/cann-recipes-infer models/deepseek_r1/models/modeling_deepseek.py (DeepseekV3Model."
    "forward_microbatch_v1 with micro_batch_mode PREFILL_MICRO_BATCH_DP_EP: two micro-batches, per MoE layer "
    "forward_dispatch_double_routing and forward_combine_double_routing under torch.npu.stream(self.stream1) "
    "between event_routing_dispatch / event_dispatch_expert / event_expert_combine / event_combine_finalize_"
    "routing, micro-batch 1 finalized in the next layer; DeepseekV3DecoderLayer's delegating methods; "
    "DeepseekV3MoE.forward_gate_init_routing, dispatch_double_routing, forward_expert, forward_combine_double_"
    "routing, forward_finalize_routing; file at commit 606eb7254257e1ff200bffbcacd99a0e865ae833)",
)
SEED = 347
SHAPE = {"vocab": 32, "hidden": 16, "inter": 16, "moe_inter": 8, "experts": 4, "top_k": 2, "layers": 3,
         "first_k_dense_replace": 1}
SLOTS = 16


def build(multistream: bool = True):
    from .model import DeepseekV3Model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekV3Model(**SHAPE, multi_stream=multistream)


def build_twin():
    from .twin import DeepseekV3Model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekV3Model(**SHAPE)


def _inputs(seq_lens: tuple[int, ...], is_prefill: bool) -> tuple[object, ...]:
    tokens = sum(seq_lens)
    g = torch.Generator().manual_seed(SEED + tokens)
    input_ids = torch.randint(0, SHAPE["vocab"], (tokens,), generator=g)
    position_ids = torch.cat([torch.arange(n) for n in seq_lens])
    kv_cache = torch.zeros(SHAPE["layers"], 2, SLOTS, SHAPE["hidden"])
    slot_mapping = torch.randperm(SLOTS, generator=g)[:tokens]
    return input_ids, position_ids, kv_cache, slot_mapping, seq_lens, is_prefill


def example_inputs() -> tuple[object, ...]:
    """A prefill batch of four requests, split into micro-batches of 5 and 4 tokens."""
    return _inputs((3, 2, 1, 3), True)


def extra_inputs() -> list[tuple[object, ...]]:
    """A decode batch: not split, every call on the main stream."""
    return [_inputs((1, 1, 1), False)]
