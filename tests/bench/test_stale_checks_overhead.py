"""The stale-checks benchmark compares what it says: the same numbers on both sides, and checks only on one."""

from __future__ import annotations

import pytest
import torch

import npudsl
from bench.stale_checks_overhead import compiled_pair, decode


def test_checks_on_and_off_compute_the_same_and_only_on_tracks_graph_memory() -> None:
    torch._dynamo.reset()
    models, x = compiled_pair(32, 4)
    with torch.no_grad():
        assert torch.equal(decode(models["on"], x, 5), decode(models["off"], x, 5))
        kept = {name: model(x) for name, model in models.items()}
        for model in models.values():
            model(x)
    kept["off"].sum()
    with pytest.raises(npudsl.StaleOutputError):
        kept["on"].sum()
