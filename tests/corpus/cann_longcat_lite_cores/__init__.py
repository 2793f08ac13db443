"""LongCat-Flash-Lite decoder layers whose core split is read from the configuration at call time.

The only entry using the dotted core-count form ``core_limit("self.cfg.moe_aic_num", ...)``
(CONTRACT section 1); an npudsl whose decorators accept only integer counts
rejects it when ``build()`` imports the model (see ``NEEDS``).
"""

from __future__ import annotations

import torch

IDIOMS = ("core_split", "param_when")
UPSTREAM = (
    "hicann/cann-recipes-infer models/longcat_flash_lite/models/modeling_longcat_flash_lite.py "
    "(decoder layer forward: moe_aic_num/moe_aiv_num/main_aic_num/main_aiv_num from custom_params, "
    "'moe' stream, three-way add)",
)
NEEDS = ("dotted_core_limit",)
SEED = 105
SHAPE = {"hidden": 16, "inter": 16, "experts": 3, "top_k": 2}


def build(multistream: bool = True, layers: int = 2):
    from .model import LiteConfig, LongcatLiteModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return LongcatLiteModel(LiteConfig(enable_moe_stream_overlap=multistream), **SHAPE, layers=layers)


def build_twin(layers: int = 2):
    from .twin import LongcatLiteModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return LongcatLiteModel(**SHAPE, layers=layers)


def example_inputs() -> tuple[object, ...]:
    return torch.randn(4, SHAPE["hidden"], generator=torch.Generator().manual_seed(SEED)), False
