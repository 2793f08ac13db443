"""The checker benchmark measures what it says: both sides capture the same multi-stream graph of the corpus
model, and the checker, timed alone, passes it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from bench.checker_overhead import _checker_alone, _first_call  # noqa: E402
from npudsl.race import npudsl_backend  # noqa: E402
from npudsl.race._timeline import runtime_op  # noqa: E402


def test_both_sides_capture_one_graph_with_stream_ops_and_the_checker_passes_it() -> None:
    graphs: list[torch.fx.GraphModule] = []
    for backend in (npudsl_backend, lambda gm, _: gm.forward):
        assert _first_call(backend, 2, graphs)() > 0
    assert len(graphs) == 2 and len(graphs[0].graph.nodes) == len(graphs[1].graph.nodes)
    assert any(runtime_op(n) == "stream_enter" for n in graphs[0].graph.nodes)
    assert _checker_alone(graphs[0]) > 0
