"""check_graph on graphs the user captured, and the rules that have no broken twin."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import race_models
from helpers import capture_graph, marked_line
from npudsl import StreamRaceError, runtime
from npudsl.race import check_graph, find_races


class SideResultOnlyOutput(nn.Module):
    """A side-stream result read only as a graph output: torchair joins before the output."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with runtime.stream("side"):
            y = x.exp()
        return y, x * 2


def _capture(model: nn.Module) -> torch.fx.GraphModule:
    return capture_graph(model, torch.randn(2, 3))


def test_check_graph_raises_on_a_captured_racy_graph() -> None:
    gm = _capture(race_models.MainReadsSide(fixed=False))
    with pytest.raises(StreamRaceError) as caught:
        check_graph(gm)
    assert type(caught.value) is StreamRaceError
    assert marked_line(race_models.__file__, "C:main_reads_side") in str(caught.value)


def test_check_graph_accepts_a_captured_correct_graph() -> None:
    check_graph(_capture(race_models.MainReadsSide(fixed=True)))


def test_graph_output_read_from_a_side_stream_is_fine() -> None:
    assert find_races(_capture(SideResultOnlyOutput())) == []


def test_unclosed_stream_in_a_hand_built_graph_is_reported() -> None:
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(torch.ops.npudsl.stream_enter, ("side", 0))
    graph.output(graph.call_function(torch.neg, (x,)))
    with pytest.raises(StreamRaceError, match="never closed"):
        check_graph(torch.fx.GraphModule(nn.Module(), graph))
