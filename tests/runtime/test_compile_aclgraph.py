"""``npudsl.compile(target="aclgraph", ...)`` builds torchair's CompilerConfig from the seed 003 options."""

from __future__ import annotations

import types

import pytest
import torch

import npudsl
from npudsl.errors import NpudslError
from npudsl.graph_config import GraphConfigError
from npudsl.testing import torchair_stub


class _Config:
    def __init__(self) -> None:
        self.mode = "max-autotune"
        self.aclgraph_config = types.SimpleNamespace(use_custom_pool=None)
        self.debug = types.SimpleNamespace(
            aclgraph=types.SimpleNamespace(
                disable_mempool_reuse_in_same_fx=False, clone_input=True, enable_output_clone=False
            )
        )


def _with_backend(stub: types.ModuleType, seen: list[_Config]) -> None:
    def get_npu_backend(*, compiler_config: _Config):
        seen.append(compiler_config)
        return lambda gm, example_inputs: gm.forward

    stub.CompilerConfig = _Config  # type: ignore[attr-defined]
    stub.get_npu_backend = get_npu_backend  # type: ignore[attr-defined]


def test_options_reach_the_compiler_config() -> None:
    import sys

    seen: list[_Config] = []
    with torchair_stub.installed():
        _with_backend(sys.modules["torchair"], seen)
        npudsl.compile(torch.nn.Linear(2, 2), target="aclgraph", mempool=("pool",), clone_outputs=True)
    (config,) = seen
    assert config.mode == "reduce-overhead"
    assert config.aclgraph_config.use_custom_pool == ("pool",)
    assert config.debug.aclgraph.disable_mempool_reuse_in_same_fx is True  # mode 1 turns mode 2 off
    assert config.debug.aclgraph.enable_output_clone is True


def test_contradictions_fail_before_torchair_is_needed() -> None:
    with pytest.raises(GraphConfigError):
        npudsl.compile(torch.nn.Linear(2, 2), target="aclgraph", mempool=("pool",), reuse_within_graph=True)


def test_graph_options_belong_to_graph_targets_only() -> None:
    with pytest.raises(NpudslError, match="'aclgraph', 'npugraph_ex', 'portable' only"):
        npudsl.compile(torch.nn.Linear(2, 2), target="ge", clone_outputs=True)


def test_without_torchair_the_error_says_what_is_needed() -> None:
    with pytest.raises(NpudslError, match="torch_npu with torchair"):
        npudsl.compile(torch.nn.Linear(2, 2), target="aclgraph")
