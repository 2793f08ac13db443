"""npudsl.compile: in-process transform, class swap, race checking with the user's line numbers."""

from __future__ import annotations

import inspect
import os

import pytest
import torch

import compile_models
import npudsl
from helpers import marked_line
from npudsl.runtime import loader

_FORK = """        runtime.record("compile_models.Block.shared.fork")
        with runtime.stream("shared", 0):
            runtime.wait("compile_models.Block.shared.fork")
            runtime.record_stream(x, "shared")
            return x.sin()  # P:compiled
"""
_JOIN = """        runtime.wait("compile_models.Block.shared.join")
"""


def _portable(joined: bool) -> str:
    """What the transformer makes of compile_models.py, written by hand."""
    source = inspect.getsource(compile_models)
    source = source.replace("from npudsl import on_stream\n", "from npudsl import runtime\n")
    source = source.replace('    @on_stream("shared")\n', "")
    source = source.replace("        return x.sin()  # P:compiled\n", _FORK)
    source = source.replace("        s = self.shared(h)\n", "        s = self.shared(h)\n" + (_JOIN if joined else ""))
    return source.replace(
        "            return x.sin()  # P:compiled\n",
        '            out = x.sin()  # P:compiled\n            runtime.record("compile_models.Block.shared.join")\n'
        "            return out\n",
    )


@pytest.fixture
def fake_transformer(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The run's output replaced by a hand-written one (with the join unless "RACY" is in the list)."""
    calls: list[str] = []
    monkeypatch.setattr(loader, "_CACHE", {})

    def transformed(roots: tuple[str, ...], target: str) -> list[tuple[str, str, str]]:
        calls.append(target)
        path = os.path.realpath(compile_models.__file__)
        return [(path, inspect.getsource(compile_models), _portable(joined="RACY" not in calls))]

    monkeypatch.setattr(loader, "transformed_sources", transformed)
    return calls


def test_compile_swaps_classes_and_matches_eager(fake_transformer: list[str]) -> None:
    model, x = compile_models.Net(), torch.randn(3, 4)
    expected = model(x)
    compiled = npudsl.compile(model, fullgraph=True)
    assert torch.equal(compiled(x), expected)
    assert isinstance(model.block, compile_models.Block) and type(model.block) is not compile_models.Block
    assert type(model.block).__module__ == "compile_models" and fake_transformer == ["portable"]


def test_race_names_the_original_file_lines(fake_transformer: list[str]) -> None:
    fake_transformer.append("RACY")
    with pytest.raises(npudsl.StreamRaceError) as caught:
        npudsl.compile(compile_models.Net(), fullgraph=True)(torch.randn(3, 4))
    assert marked_line(compile_models.__file__, "P:compiled") in str(caught.value)
    assert marked_line(compile_models.__file__, "C:compiled") in str(caught.value)
    assert str(caught.value).startswith("tensor 'x.sin()' made")  # the user's expression, not the generated 'out'


@pytest.mark.parametrize("target", ["aclgraph", "ge", "npugraph_ex", "tpu"])
def test_other_targets_fail_before_touching_the_model(target: str) -> None:
    model = compile_models.Net()
    with pytest.raises(npudsl.NpudslError, match=repr(target)):
        npudsl.compile(model, target=target)
    assert type(model.block) is compile_models.Block


def test_backend_is_not_a_user_choice() -> None:
    with pytest.raises(npudsl.NpudslError, match="backend"):
        npudsl.compile(compile_models.Net(), backend="inductor")


def test_line_map_follows_reindented_and_inserted_lines() -> None:
    original = "a = 1\ndef f():\n    return 2\n"
    transformed = "a = 1\ndef f():\n    with s:\n        x()\n        return 2\n"
    assert loader.line_map(original, transformed)[1:6] == [1, 2, 3, 3, 3]


def test_real_transformer_compiles_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "_CACHE", {})
    model, x = compile_models.Net(), torch.randn(3, 4)
    expected = model(x)
    assert torch.equal(npudsl.compile(model, fullgraph=True)(x), expected)
    assert type(model.block).__npudsl_original__ is compile_models.Block
