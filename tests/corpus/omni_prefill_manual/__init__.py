"""omni-infer DeepSeek prefill: hand-placed events on three side streams (``sync="manual"``)."""

from __future__ import annotations

import torch

IDIOMS = ("manual_pipeline", "container_returns", "side_to_side", "non_tensor_args")
UPSTREAM = (
    "omni-ai-npu/omni-infer omni/models/deepseek/deepseek_v3_a2.py (AscendDeepseekAttention_MLA."
    "forward_prefill_pd_seperate: kv_stream2 gathers the latent cache, kv_stream waits for it; "
    "DeepseekMoE.forward_prefill_pd_seperate: the token all-gather on its own stream, wait_stream both ways)",
)
SEED = 107
SHAPE = {"hidden": 16, "q_lora_rank": 8, "kv_lora_rank": 8, "heads": 2, "nope_dim": 4, "rope_dim": 4, "v_dim": 4,
         "inter": 8, "experts": 4, "top_k": 2}
TOKENS, SLOTS, LAYERS = 4, 10, 2


def build(multistream: bool = True):
    from .layer import PrefillModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return PrefillModel(**SHAPE, layers=LAYERS, multistream=multistream)


def build_twin():
    from .twin import PrefillModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return PrefillModel(**SHAPE, layers=LAYERS)


def example_inputs() -> tuple[object, ...]:
    """Hidden states, positions of the gathered tokens, one KV cache tuple per layer, slots."""
    g = torch.Generator().manual_seed(SEED)
    hidden = torch.randn(TOKENS, SHAPE["hidden"], generator=g)
    caches = [(torch.zeros(SLOTS, SHAPE["kv_lora_rank"]), torch.zeros(SLOTS, SHAPE["rope_dim"])) for _ in range(LAYERS)]
    return hidden, torch.arange(2 * TOKENS), caches, torch.tensor([9, 0, 8, 1, 7, 2, 6, 3])
