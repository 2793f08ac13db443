"""Each broken model raises StreamRaceError naming both lines; each fixed one runs and equals eager."""

from __future__ import annotations

import pytest
import torch

import race_models
from helpers import marked_line
from npudsl import StreamRaceError
from npudsl.race import npudsl_backend

NAMES = sorted(race_models.PAIRS)


def _compiled(name: str, fixed: bool) -> tuple[torch.nn.Module, object]:
    model = race_models.PAIRS[name](fixed)
    return model, torch.compile(model, backend=npudsl_backend, fullgraph=True)


@pytest.mark.parametrize("name", NAMES)
def test_broken_model_names_producer_and_consumer_lines(name: str) -> None:
    _, compiled = _compiled(name, fixed=False)
    with pytest.raises(StreamRaceError) as caught:
        compiled(torch.randn(3, 4))
    message = str(caught.value)
    assert marked_line(race_models.__file__, f"P:{name}") in message
    assert marked_line(race_models.__file__, f"C:{name}") in message


@pytest.mark.parametrize("name", NAMES)
def test_fixed_model_passes_and_equals_single_stream(name: str) -> None:
    model, compiled = _compiled(name, fixed=True)
    x = torch.randn(3, 4)
    assert torch.equal(compiled(x), model(x))


def test_eight_pairs_at_least() -> None:
    assert len(NAMES) >= 8
