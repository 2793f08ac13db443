"""sglang's DeepSeek-V3.2 (DSA) attention on Ascend: the fused MLA prologue or the q up projection on "alt_stream"."""

from __future__ import annotations

import torch

IDIOMS = ("param_when", "non_tensor_args", "container_returns", "module_constants", "side_cache_write")
UPSTREAM = (
    "sgl-project/sglang python/sglang/srt/hardware_backend/npu/modules/deepseek_v2_attention_mla_npu.py "
    "(forward_dsa_prepare_npu, npu_mla_preprocess, forward_dsa_core_npu, at 03e07bf: on decode the fused "
    "mla_preprocess on alt_stream after an event recorded on the main stream, q_lora recomputed on the main "
    "stream, then wait on alt_stream; on prefill q_b_proj on alt_stream with q.record_stream and q_event, "
    "kv_a_layernorm on the main stream before the wait, as in the tree before fused_split_qk_norm)",
    "sgl-project/sglang python/sglang/srt/models/deepseek_v2.py (DeepseekV2AttentionMLA: the prepare/core "
    "split, alt_stream)",
)
SEED = 181
SHAPE = {"hidden": 16, "inter": 16, "layers": 2, "heads": 2, "q_lora_rank": 8, "kv_lora_rank": 8, "qk_nope": 4,
         "qk_rope": 4, "v_head": 4, "index_heads": 2, "index_head_dim": 8, "index_topk": 3, "max_positions": 32}
SLOTS = 12


def build(multistream: bool = True):
    from .model import DeepseekV32Model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekV32Model(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import DeepseekV32Model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekV32Model(**SHAPE)


def _inputs(is_decode: bool, tokens: int) -> tuple[object, ...]:
    g = torch.Generator().manual_seed(SEED + tokens)
    hidden_states = torch.randn(tokens, SHAPE["hidden"], generator=g)
    positions = torch.randint(0, SHAPE["max_positions"], (tokens,), generator=g)
    layers = SHAPE["layers"]
    ckv_cache = torch.randn(layers, SLOTS, SHAPE["kv_lora_rank"], generator=g)
    k_rope_cache = torch.randn(layers, SLOTS, SHAPE["qk_rope"], generator=g)
    index_k_cache = torch.randn(layers, SLOTS, SHAPE["index_head_dim"], generator=g)
    out_cache_loc = torch.randperm(SLOTS, generator=g)[:tokens]
    return hidden_states, positions, ckv_cache, k_rope_cache, index_k_cache, out_cache_loc, is_decode


def example_inputs() -> tuple[object, ...]:
    """A decode batch: the fused MLA prologue goes to "alt_stream"."""
    return _inputs(True, 3)


def extra_inputs() -> list[tuple[object, ...]]:
    """A prefill batch: the q up projection goes to "alt_stream"."""
    return [_inputs(False, 5)]
