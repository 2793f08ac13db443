"""vllm-ascend's torchair (GE) MLA decode with its five ``npu_wait_tensor`` edges, ported to decorators."""

from __future__ import annotations

import torch

IDIOMS = ("module_constants", "container_returns", "non_tensor_args")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/torchair/torchair_mla.py (AscendMLATorchairImpl.forward, exec_kv, "
    "rope_single, _q_proj_and_k_up_proj: five npu_wait_tensor calls around the 'mla_secondary' stream; "
    "tree before 'Drop torchair' 835b4c8f)",
)
NEEDS = ()
SEED = 141
SHAPE = {"hidden": 16, "q_lora_rank": 8, "kv_lora_rank": 8, "heads": 2, "nope_dim": 4, "rope_dim": 4, "v_dim": 4,
         "max_positions": 32}
TOKENS, SLOTS = 3, 8


def build(multistream: bool = True):
    from .mla import MLADecode

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return MLADecode(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import MLADecode

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return MLADecode(**SHAPE)


def example_inputs() -> tuple[object, ...]:
    g = torch.Generator().manual_seed(SEED)
    hidden_states = torch.randn(TOKENS, SHAPE["hidden"], generator=g)
    positions = torch.tensor([5, 17, 2])
    kv_cache = (torch.zeros(SLOTS, SHAPE["kv_lora_rank"]), torch.zeros(SLOTS, SHAPE["rope_dim"]))
    slots = torch.tensor([6, 1, 3])
    return hidden_states, positions, kv_cache, slots
