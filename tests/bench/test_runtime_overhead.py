"""The runtime benchmark's structural claim, checked on every run: the transformed model's compiled graph is
the hand-written one, node for node (the timings stay in the benchmark)."""

from __future__ import annotations

from bench.overhead_models import inputs
from bench.runtime_overhead import build_models, graph_signature


def test_transformed_graph_equals_the_hand_written_graph() -> None:
    models, x = build_models(32, 64), inputs(4, 32)
    hand = graph_signature(models["hand"], x)
    assert any("record_stream" in target for _, target, _ in hand)
    assert graph_signature(models["transformed"], x) == hand
