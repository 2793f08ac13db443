"""Each broken model raises StreamRaceError naming both lines; each fixed one runs and equals eager."""

from __future__ import annotations

import types

import pytest
import torch

import inplace_race_models
import race_models
from helpers import marked_line
from npudsl import StreamRaceError
from npudsl.race import npudsl_backend

CASES = [(module, name) for module in (race_models, inplace_race_models) for name in sorted(module.PAIRS)]
IDS = [name for _, name in CASES]


def _compiled(module: types.ModuleType, name: str, fixed: bool) -> tuple[torch.nn.Module, object]:
    model = module.PAIRS[name](fixed)
    return model, torch.compile(model, backend=npudsl_backend, fullgraph=True)


@pytest.mark.parametrize(("module", "name"), CASES, ids=IDS)
def test_broken_model_names_producer_and_consumer_lines(module: types.ModuleType, name: str) -> None:
    _, compiled = _compiled(module, name, fixed=False)
    with pytest.raises(StreamRaceError) as caught:
        compiled(torch.randn(3, 4))
    message = str(caught.value)
    assert marked_line(module.__file__, f"P:{name}") in message
    assert marked_line(module.__file__, f"C:{name}") in message


@pytest.mark.parametrize(("module", "name"), CASES, ids=IDS)
def test_fixed_model_passes_and_equals_single_stream(module: types.ModuleType, name: str) -> None:
    model, compiled = _compiled(module, name, fixed=True)
    x = torch.randn(3, 4)
    assert torch.equal(compiled(x), model(x))


def test_pair_counts() -> None:
    assert len(race_models.PAIRS) >= 8
    assert len(inplace_race_models.PAIRS) >= 6
