"""``npudsl.compile`` for the npugraph_ex and cuda targets: the backend, its options, the user's kwargs."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import compile_models
import npudsl
from npudsl.errors import NpudslError
from npudsl.graph_config import GraphConfigError, npugraph_ex_options
from npudsl.runtime import loader
from npudsl.testing import standins
from npudsl.testing.standins._config import apply_options


@pytest.fixture
def compiled_with(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``torch.compile`` recorded (its keyword arguments) and replaced by the eager model; twins rebuilt."""
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(loader, "_CACHE", {})

    def recorded(model: Any, **kwargs: Any) -> Any:
        seen.append(kwargs)
        return model

    monkeypatch.setattr(torch, "compile", recorded)
    return seen


def test_npugraph_ex_compiles_with_its_backend_and_memory_options(compiled_with: list[dict[str, Any]]) -> None:
    model = compile_models.Net()
    with standins.installed("npugraph_ex"):
        npudsl.compile(
            model,
            target="npugraph_ex",
            mempool=("pool",),
            clone_outputs=True,
            fullgraph=True,
            options={"deadlock_check": True},
        )
    assert compiled_with == [
        {
            "backend": "npugraph_ex",
            "fullgraph": True,
            "options": {
                "deadlock_check": True,
                "use_graph_pool": ("pool",),
                "reuse_graph_pool_in_same_fx": False,
                "clone_input": True,
                "clone_output": True,
            },
        }
    ]
    assert {"npu", "stream"} <= set(type(model.block).forward.__code__.co_names)  # the npugraph_ex twin: its call site


@pytest.mark.parametrize("kwargs", [{}, {"mempool": ("pool",)}, {"reuse_within_graph": False, "clone_inputs": False}])
def test_npugraph_ex_options_are_accepted_by_its_config(kwargs: dict[str, Any]) -> None:
    """npugraph_ex sets each option on its CompilerConfig (stand-in pinned to the wheel by tests/contract)."""
    config = apply_options(standins.NpuGraphExConfig(), npugraph_ex_options(**kwargs))
    assert config.reuse_graph_pool_in_same_fx.value == ("0" if kwargs else "1")
    assert config.use_graph_pool == kwargs.get("mempool")


def test_npugraph_ex_options_set_twice_are_refused(compiled_with: list[dict[str, Any]]) -> None:
    with standins.installed("npugraph_ex"), pytest.raises(NpudslError, match="'clone_output' are set by npudsl"):
        npudsl.compile(compile_models.Net(), target="npugraph_ex", clone_outputs=True, options={"clone_output": False})
    with pytest.raises(GraphConfigError, match="contradicts"):
        npudsl.compile(compile_models.Net(), target="npugraph_ex", mempool=("pool",), reuse_within_graph=True)
    assert compiled_with == []


def test_npugraph_ex_without_torch_npu_says_what_is_needed() -> None:
    model = compile_models.Net()
    with pytest.raises(NpudslError, match="needs torch_npu .* registers the 'npugraph_ex' backend"):
        npudsl.compile(model, target="npugraph_ex")
    assert type(model.block) is compile_models.Block


def test_cuda_transforms_and_compiles_with_inductor(
    compiled_with: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch.Tensor, "record_stream", standins.record_stream)
    model, x = compile_models.Net(), torch.randn(3, 4)
    expected = model(x)
    with standins.device_installed("cuda") as device:
        compiled = npudsl.compile(model, target="cuda", mode="reduce-overhead", dynamic=False)
        assert torch.equal(compiled(x), expected)
    assert compiled_with == [{"backend": "inductor", "mode": "reduce-overhead", "dynamic": False}]
    assert isinstance(model.block, compile_models.Block) and type(model.block) is not compile_models.Block
    assert {"cuda", "stream"} <= set(type(model.block).forward.__code__.co_names)
    assert ("stream", "shared") in device.made  # the twin ran on the stand-in torch.cuda


def test_cuda_refuses_graph_memory_options(compiled_with: list[dict[str, Any]]) -> None:
    with pytest.raises(NpudslError, match="apply to targets 'aclgraph', 'npugraph_ex', 'portable' only"):
        npudsl.compile(compile_models.Net(), target="cuda", clone_outputs=True)
    assert compiled_with == []
