"""DeepSeek-V3.2 lightning indexer: query and head-weight branches on two side streams beside the key branch."""

from __future__ import annotations

import torch

IDIOMS = ("side_to_side", "module_constants", "optional_star_static", "container_returns", "non_tensor_args")
UPSTREAM = (
    "hicann/cann-recipes-infer models/deepseek-v3.2-exp/models/indexer.py (Indexer.prefill_decode_ascendc, "
    "at 07067b7: module-level tagged events, npu_record_tagged_stream, streams '22' and '33')",
    "sgl-project/sglang python/sglang/srt/layers/attention/nsa/nsa_indexer.py (Indexer.forward_npu, "
    "_get_logits_head_gate: q_scale folded into the head weights)",
)
SEED = 103
SHAPE = {"hidden": 16, "q_lora_rank": 8, "heads": 2, "head_dim": 8, "rope_dim": 4, "index_topk": 3}
TOKENS, SLOTS = 4, 12


def build(multistream: bool = True):
    from .indexer import Indexer

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return Indexer(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import Indexer

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return Indexer(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    g = torch.Generator().manual_seed(SEED)
    x = torch.randn(TOKENS, SHAPE["hidden"], generator=g)
    qr = torch.randn(TOKENS, SHAPE["q_lora_rank"], generator=g)
    angles = torch.arange(TOKENS, dtype=torch.float32)[:, None] * torch.tensor([1.0, 0.25, 1.0, 0.25])
    key_cache = torch.round(torch.randn(SLOTS, SHAPE["head_dim"], generator=g) * 40)
    key_scale_cache = torch.rand(SLOTS, 1, generator=g) / 100
    c8_input_dict = {"pertoken_scale": 0.5 + torch.rand(TOKENS, 1, generator=g)}
    slot_mapping = torch.tensor([9, 3, 11, 0])
    return x, qr, (angles.cos(), angles.sin()), key_cache, key_scale_cache, slot_mapping, False, c8_input_dict
