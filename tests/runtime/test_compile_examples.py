"""Every example, compiled whole by ``npudsl.compile`` for the portable target, equals the undecorated model."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

import npudsl
from npudsl.race import find_races
from npudsl.race._timeline import runtime_op
from npudsl.runtime import loader

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODELS = [("seed000", "Model"), ("moe_decoder", "MoEDecoder"), ("core_split", "CoreSplitBlock")]


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _undecorated(path: Path, name: str):
    from transform.generated import load, undecorated

    return load(undecorated(path), name)


def _flat(value: object) -> list[torch.Tensor]:
    return [value] if isinstance(value, torch.Tensor) else [t for v in value for t in _flat(v)]  # type: ignore[union-attr]


@pytest.mark.parametrize("name,cls", MODELS)
def test_example_compiles_whole_and_equals_the_undecorated_model(
    name: str, cls: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loader, "_CACHE", {})
    module = _import(EXAMPLES / f"{name}.py", f"example_{name}")
    reference = _undecorated(EXAMPLES / f"{name}.py", f"undecorated_{name}")
    inputs = module.example_inputs()
    torch.manual_seed(0)
    expected = getattr(reference, cls)()(*inputs)
    torch.manual_seed(0)
    model = getattr(module, cls)()
    actual = npudsl.compile(model, fullgraph=True)(*inputs)
    for want, got in zip(_flat(expected), _flat(actual), strict=True):
        assert torch.equal(want, got)
    assert isinstance(model, getattr(module, cls)) and type(model).__npudsl_original__ is getattr(module, cls)


def test_the_moe_graph_has_streams_and_no_race(monkeypatch: pytest.MonkeyPatch) -> None:
    """The captured MoE graph really holds two streams, and the checker finds nothing in it."""
    monkeypatch.setattr(loader, "_CACHE", {})
    module = _import(EXAMPLES / "moe_decoder.py", "example_moe_graph")
    model = module.MoEDecoder(layers=2)
    loader.swap_classes(model, "portable")
    captured: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]):  # noqa: ANN202
        captured.append(gm)
        return gm.forward

    torch.compile(model, backend=backend, fullgraph=True)(*module.example_inputs())
    (gm,) = captured
    tags = {n.args[0] for n in gm.graph.nodes if runtime_op(n) == "stream_enter"}
    assert tags == {"shared"}
    assert find_races(gm) == []
