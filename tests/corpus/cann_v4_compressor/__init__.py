"""DeepSeek-V4 decode attention in cann-recipes-infer: four side streams, chosen per layer by its compress ratio."""

from __future__ import annotations

import torch

IDIOMS = ("per_layer_streams", "side_cache_write", "core_split", "module_constants", "container_returns",
          "non_tensor_args")
UPSTREAM = (
    "hicann/cann-recipes-infer models/deepseek_v4/models/modeling_deepseek.py (Attention.mla_prolog_decode: "
    "wkv and the KV norm/rotary on mla_stream at 12/24 cores, mla_events[1] before wq_b, the window cache "
    "written on main after mla_events[2]; Attention.sparse_attn: the compressor on compressor_stream at "
    "16/32 cores, cmpr_events[0]/[1], per layer by compress_ratios; DeepseekV3ForCausalLM."
    "generate_kernel_metadata on metadata_stream; tree fbc225d2de3157a093a2e7dfc2b23086d23ed8f9)",
    "hicann/cann-recipes-infer models/deepseek_v4/models/modules/indexer.py (Indexer.forward: weights_proj "
    "and the indexer compressor on main at 16/32 cores, the query on indexer_stream at 8/16, "
    "indexer_events[0]/[1], record_stream(q, cur_stream); same tree)",
)
SEED = 404
SHAPE = {"hidden": 16, "inter": 16, "q_lora_rank": 8, "heads": 2, "head_dim": 8, "rope_dim": 4, "index_heads": 2,
         "index_dim": 8, "index_topk": 2, "cmp_slots": 4}
COMPRESS_RATIOS = (1, 4, 128, 4)
TOKENS, SLOTS = 12, 16


def build(multistream: bool = True):
    from .model import DeepseekV4Model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekV4Model(SHAPE, COMPRESS_RATIOS, multistream=multistream)


def build_twin():
    from .twin import DeepseekV4Model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekV4Model(SHAPE, COMPRESS_RATIOS)


def example_inputs() -> tuple[object, ...]:
    g = torch.Generator().manual_seed(SEED)
    hidden_states = torch.randn(TOKENS, SHAPE["hidden"], generator=g)
    positions = torch.randint(0, 64, (TOKENS,), generator=g)
    slot_mapping = torch.randperm(SLOTS, generator=g)[:TOKENS]
    kv_caches = tuple(
        (torch.randn(SLOTS, SHAPE["head_dim"], generator=g), torch.zeros(SHAPE["cmp_slots"], SHAPE["head_dim"]),
         torch.zeros(SHAPE["cmp_slots"], SHAPE["index_dim"]))
        for _ in COMPRESS_RATIOS
    )
    return hidden_states, positions, slot_mapping, torch.tensor(TOKENS), kv_caches
