"""DeepSeek-V4's DSA attention on vllm-ascend: the MLA prolog's KV half and the indexer's caches on one overlap stream."""

from __future__ import annotations

import torch

IDIOMS = ("side_cache_write", "side_to_side", "container_returns", "non_tensor_args", "module_constants")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/attention/dsa_v1.py (AscendDSAImpl._mla_prolog_multistream: three "
    "parts, each an event recorded on main that dsv4_dsa_overlap_stream() waits for and a "
    "main_stream.wait_stream(aux_stream) after it, the KV quant / wkv matmul / norm, rope and "
    "dsa_kv_compress_scatter into the window cache on the overlap stream; _forward_attention; "
    "_update_compressed_caches_and_select_topk with IndexerOverlapPlan; at 182b75ea84ff13ece27b57391331ef8935410aea)",
    "vllm-project/vllm-ascend vllm_ascend/models/deepseek_v4/indexer.py (DeepseekV4Indexer.forward, "
    "_cv_compute_query_and_update_cache_multistream: e_kv_ready, quantize_key_and_update_cache on the overlap "
    "stream, e_rope_done, update_scale_cache there; _select_topk_multistream: weights_proj on the overlap stream, "
    "weights_proj_start/weights_proj_done around the compressed-KV scatter on main; same tree)",
)
SEED = 341
SHAPE = {"hidden": 16, "inter": 16, "q_lora_rank": 8, "heads": 2, "head_dim": 8, "rope_dim": 4, "index_heads": 2,
         "index_dim": 8, "index_topk": 2}
COMPRESS_RATIOS = (4, 1, 4)
SLOTS, CMP_SLOTS, STATE_SLOTS = 16, 4, 4


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


def _caches(g: torch.Generator) -> tuple[torch.Tensor, ...]:
    """compressed KV, window KV, compressor state, indexer state, indexer keys, indexer key scales."""
    hd, ix = SHAPE["head_dim"], SHAPE["index_dim"]
    return (torch.zeros(CMP_SLOTS, hd), torch.randn(SLOTS, hd, generator=g), torch.zeros(STATE_SLOTS, hd),
            torch.zeros(STATE_SLOTS, ix), torch.randn(CMP_SLOTS, ix, generator=g), torch.ones(CMP_SLOTS, 1))


def _inputs(tokens: int, is_prefill: bool) -> tuple[object, ...]:
    g = torch.Generator().manual_seed(SEED + tokens)
    hidden_states = torch.randn(tokens, SHAPE["hidden"], generator=g)
    positions = torch.randint(0, 64, (tokens,), generator=g)
    kv_caches = tuple(_caches(g) for _ in COMPRESS_RATIOS)
    slot_mapping = torch.randperm(SLOTS, generator=g)[:tokens]
    return hidden_states, positions, kv_caches, slot_mapping, is_prefill


def example_inputs() -> tuple[object, ...]:
    """A decode batch of 8 tokens: each c4 layer compresses two rows, its caches updated on the overlap stream."""
    return _inputs(8, False)


def extra_inputs() -> list[tuple[object, ...]]:
    """A prefill batch (``wq_b`` quantized on main), and a decode batch too small to compress (``kv = None``)."""
    return [_inputs(6, True), _inputs(3, False)]
