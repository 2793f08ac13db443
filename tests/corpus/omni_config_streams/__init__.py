"""omni-infer MoE decode tuned by a global configuration: streams '21', '22', '23' switched by module-level flags.

``build(multistream)`` sets the module-global flags of :mod:`.config` (they are
process-wide, like omni-infer's ``model_extra_config``): a model built later changes
them for every model of this entry.
"""

from __future__ import annotations

import torch

IDIOMS = ("config_when", "side_to_side", "module_constants", "non_tensor_args")
UPSTREAM = (
    "omni-ai-npu/omni-infer omni/models/deepseek/deepseek_v3_a2.py (DeepseekMoE.forward_normal under "
    "model_extra_config.operator_opt_config.moe_multi_stream_tune: streams '22' gating, '21' shared expert, "
    "'23' top-k all-gather, back to '22' to split it)",
    "omni-ai-npu/omni-infer omni/models/common/config/model_config.py (the module-global model_extra_config)",
)
SEED = 111
SHAPE = {"hidden": 16, "inter": 8, "experts": 4, "top_k": 2}


def build(multistream: bool = True):
    from . import config
    from .moe import DeepseekMoE

    config.configure(multistream)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekMoE(**SHAPE, use_shared_stream=multistream)


def build_twin():
    from .twin import DeepseekMoE

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return DeepseekMoE(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    return (torch.randn(4, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)),)
