"""MLA attention of vllm-ascend's torchair DeepSeek path: KV and RoPE work on the "mla_secondary" stream."""

from __future__ import annotations

import torch

IDIOMS = ("param_when", "non_tensor_args", "container_returns")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/torchair/torchair_mla.py (AscendMLATorchairImpl.forward, exec_kv, "
    "rope_single, _q_proj_and_k_up_proj, _v_up_proj_and_o_proj; tree before 'Drop torchair' 835b4c8f)",
    "vllm-project/vllm-ascend vllm_ascend/torchair/models/torchair_deepseek_v2.py "
    "(TorchairDeepseekV2MLAAttention.forward; same tree)",
)
SEED = 102
SHAPE = {"hidden": 16, "q_lora_rank": 8, "kv_lora_rank": 8, "heads": 2, "nope_dim": 4, "rope_dim": 4, "v_dim": 4}
DECODES, PREFILLS, SLOTS = 3, 2, 8


def build(multistream: bool = True):
    from .layer import MLAAttention

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return MLAAttention(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import MLAAttention

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return MLAAttention(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    """Hidden states, a ``(nope, rope)`` KV cache tuple, and the attention metadata object."""
    from .metadata import AttentionMetadata, DecodeMetadata

    g = torch.Generator().manual_seed(SEED)
    tokens = DECODES + PREFILLS
    hidden = torch.randn(tokens, SHAPE["hidden"], generator=g)
    kv_cache = (torch.randn(SLOTS, SHAPE["kv_lora_rank"], generator=g), torch.randn(SLOTS, SHAPE["rope_dim"], generator=g))
    angles = torch.arange(tokens, dtype=torch.float32)[:, None] * torch.tensor([1.0, 0.5, 1.0, 0.5])
    metadata = AttentionMetadata(num_decodes=DECODES, num_prefills=PREFILLS, num_decode_tokens=DECODES,
                                 slot_mapping=torch.tensor([5, 1, 6, 2, 7]),
                                 decode=DecodeMetadata(cos=angles.cos(), sin=angles.sin()))
    return hidden, kv_cache, metadata
