"""An MLA prefill whose KV branch is a chain of calls on one side stream ("kv_stream"), each reading the last."""

from __future__ import annotations

import torch

IDIOMS = ("module_constants", "container_returns")
UPSTREAM = (
    "omni-ai-npu/omni-infer omni/models/deepseek/deepseek_v3_a2.py (AscendDeepseekAttention_MLA prefill with "
    "prefill_mla_multi_stream: kv_rmsnorm_rope then kv_b_proj and the k concat on kv_stream, one block after "
    "the other, joined before the attention)",
)
SEED = 161
SHAPE = {"hidden": 16, "q_lora_rank": 8, "kv_lora_rank": 8, "heads": 2, "nope_dim": 4, "rope_dim": 4, "v_dim": 4,
         "max_positions": 32}
TOKENS = 5


def build(multistream: bool = True):
    from .prefill import PrefillMLA

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return PrefillMLA(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import PrefillMLA

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return PrefillMLA(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    g = torch.Generator().manual_seed(SEED)
    return torch.randn(TOKENS, SHAPE["hidden"], generator=g), torch.tensor([0, 1, 2, 3, 4])
