"""Seed 003: the aclgraph memory options map exactly onto real CompilerConfig options."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from npu_contract import ApiTable, verify_config_paths, verify_source
from npudsl.errors import NpudslError
from npudsl.graph_config import (
    TORCHAIR_DEFAULTS,
    ConfigSetting,
    GraphConfigError,
    aclgraph_options,
    build_compiler_config,
)

POOL = (0, 7)  # what torch.npu.graph_pool_handle() returns: an opaque tuple


def _as_dict(settings: tuple[ConfigSetting, ...]) -> dict[str, object]:
    return {s.path: s.value for s in settings}


def test_defaults_spell_out_every_setting() -> None:
    assert _as_dict(aclgraph_options()) == {
        "mode": "reduce-overhead",
        "aclgraph_config.use_custom_pool": None,
        "debug.aclgraph.disable_mempool_reuse_in_same_fx": False,
        "debug.aclgraph.clone_input": True,
        "debug.aclgraph.enable_output_clone": False,
    }


@pytest.mark.parametrize(
    "kwargs, path, value",
    [
        ({"mempool": POOL}, "aclgraph_config.use_custom_pool", POOL),  # mode 1
        ({"mempool": POOL}, "debug.aclgraph.disable_mempool_reuse_in_same_fx", True),  # mode 1 turns mode 2 off
        ({"reuse_within_graph": False}, "debug.aclgraph.disable_mempool_reuse_in_same_fx", True),  # mode 2 off
        ({"reuse_within_graph": True}, "debug.aclgraph.disable_mempool_reuse_in_same_fx", False),
        ({"mempool": POOL, "reuse_within_graph": False}, "debug.aclgraph.disable_mempool_reuse_in_same_fx", True),
        ({"clone_inputs": False}, "debug.aclgraph.clone_input", False),  # mode 3 off
        ({"clone_outputs": True}, "debug.aclgraph.enable_output_clone", True),
        ({"mempool": POOL, "share_inputs_across_graphs": True}, "debug.aclgraph.clone_input", True),
    ],
)
def test_seed_table(kwargs: dict, path: str, value: object) -> None:
    settings = _as_dict(aclgraph_options(**kwargs))
    assert settings[path] == value
    assert settings["mode"] == "reduce-overhead"


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"mempool": POOL, "reuse_within_graph": True}, "contradicts"),
        ({"share_inputs_across_graphs": True}, "needs mempool"),
        ({"mempool": POOL, "share_inputs_across_graphs": True, "clone_inputs": False}, "needs clone_inputs"),
        ({"mempool": 3}, "graph_pool_handle"),
        ({"clone_inputs": 1}, "True or False"),
        ({"reuse_within_graph": "no"}, "True or False"),
    ],
)
def test_contradictions_raise(kwargs: dict, fragment: str) -> None:
    with pytest.raises(GraphConfigError, match=fragment) as err:
        aclgraph_options(**kwargs)
    assert isinstance(err.value, NpudslError)


def test_paths_exist_in_real_compiler_config(npu_table: ApiTable) -> None:
    paths = [s.path for s in aclgraph_options(mempool=POOL)]
    assert verify_config_paths(paths, npu_table.config) == []


def test_defaults_match_real_compiler_config(npu_table: ApiTable) -> None:
    assert {p: npu_table.config.leaves[p].default for p in TORCHAIR_DEFAULTS} == TORCHAIR_DEFAULTS


def test_values_are_allowed_by_real_options(npu_table: ApiTable) -> None:
    for kwargs in ({}, {"mempool": POOL, "clone_outputs": True}, {"reuse_within_graph": False, "clone_inputs": False}):
        lines = ["import torchair", "config = torchair.CompilerConfig()"]
        lines += [f"config.{s.path} = {s.value!r}" for s in aclgraph_options(**kwargs)]
        lines.append("backend = torchair.get_npu_backend(compiler_config=config)")
        assert verify_source("\n".join(lines) + "\n", npu_table) == []


def _fake_config() -> types.SimpleNamespace:
    aclgraph = types.SimpleNamespace(
        disable_mempool_reuse_in_same_fx=False, clone_input=True, enable_output_clone=False
    )
    return types.SimpleNamespace(
        mode="max-autotune",
        aclgraph_config=types.SimpleNamespace(use_custom_pool=None),
        debug=types.SimpleNamespace(aclgraph=aclgraph),
    )


def test_build_compiler_config_sets_every_path() -> None:
    config = build_compiler_config(aclgraph_options(mempool=POOL, clone_outputs=True), factory=_fake_config)
    assert config.mode == "reduce-overhead"
    assert config.aclgraph_config.use_custom_pool == POOL
    assert config.debug.aclgraph.disable_mempool_reuse_in_same_fx is True
    assert config.debug.aclgraph.enable_output_clone is True


def test_graph_config_imports_without_torch() -> None:
    code = "import sys, npudsl.graph_config; assert 'torch' not in sys.modules and 'torchair' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
