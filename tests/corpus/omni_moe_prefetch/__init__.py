"""omni-infer's MoE decode (dispatch/combine, GE mode): the shared expert's three phases and the main stream's
weight prefetches that wait for them, ported."""

from __future__ import annotations

import torch

IDIOMS = ("phased_shared", "module_constants", "container_returns", "non_tensor_args", "if_call")
UPSTREAM = (
    "omni-ai-npu/omni-infer omni/models/common/layers/moe/deepseek_moe.py (DeepseekMoE._forward_decode_dispatch_"
    "combine: the shared expert on STREAM_SHARED_EXPERT around dispatch, the grouped matmuls and combine, three "
    "npu_wait_tensor; npu_prefetch of the experts' w13 after the shared gate/up and of the next layer's attention "
    "weights after the shared output; commit c8bc2bbbaa1084139a8e70405c4873632c0dab79)",
    "omni-ai-npu/omni-infer omni/models/deepseek/deepseek_v3.py (DeepseekDecoderLayer.forward adds the MoE's two "
    "outputs; the model loop's next_attention_weights)",
)
SEED = 161
HIDDEN, LAYERS, TOKENS = 16, 3, 5
ATTENTION = {"q_lora_rank": 8, "qk_dim": 12, "kv_lora_rank": 10}
MOE = {"hidden": HIDDEN, "inter": 8, "shared_inter": 12, "experts": 4, "top_k": 2, "prefetch_kb": 48,
       "attn_prefetch_kb": 24}


def build(multistream: bool = True):
    from .layers import Model
    from .moe import DeepseekMoE

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return Model(HIDDEN, ATTENTION, LAYERS, lambda: DeepseekMoE(**MOE, multistream=multistream))


def build_twin():
    from .layers import Model
    from .twin import DeepseekMoE

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return Model(HIDDEN, ATTENTION, LAYERS, lambda: DeepseekMoE(**MOE))


def example_inputs() -> tuple[object, ...]:
    return (torch.randn(TOKENS, HIDDEN, generator=torch.Generator().manual_seed(SEED)),)
