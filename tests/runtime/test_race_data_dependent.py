"""The race checker on ops whose result has a data-dependent size (``torch.bincount``), and the ops reading it.

Such a node cannot run on ``meta`` (no kernel, or a size without a hint), so its effect comes from the overload
schemas of its name (``npudsl/race/_fallback.py``). Every overload counted, ``.out`` included, whose result is
``Tensor(a!)``: with no ``out=`` given, nothing was written, so the result was taken for a view of the first
argument. ``counts = torch.bincount(flat)`` then stood for the memory of the graph input ``ids`` (made before every
op of every stream), and so did ``counts.sum()``: the main stream could read ``counts`` with no wait and the
checker said nothing. A GE token on the wrong element of a tuple ending in ``bincount`` passed the same way
(``tests/targets/test_ge_called_element.py`` ended with ``remainder`` for that reason). An overload now fits only
when the node gives every slot without a default.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers import capture_graph, marked_line
from npudsl import StreamRaceError, runtime
from npudsl.race import check_graph
from npudsl.race._alias import effect, root


class SideCounts(nn.Module):
    def __init__(self, fixed: bool) -> None:
        super().__init__()
        self.fixed = fixed

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        with runtime.stream("side"):
            flat = ids.reshape(-1)
            counts = torch.bincount(flat, minlength=4)  # P:side_counts
            runtime.record("join")
        if self.fixed:
            runtime.wait("join")
        return counts.sum() + ids.sum()  # C:side_counts


IDS = torch.tensor([[0, 2], [1, 2], [3, 0]])


def test_a_data_dependent_result_read_with_no_wait_races() -> None:
    """On main: no race found (``counts`` was a view of ``ids``)."""
    gm = capture_graph(SideCounts(fixed=False), IDS.clone())
    with pytest.raises(StreamRaceError) as caught:
        check_graph(gm)
    assert marked_line(__file__, "P:side_counts") in str(caught.value)
    assert marked_line(__file__, "C:side_counts") in str(caught.value)


def test_a_data_dependent_result_read_after_the_wait_is_fine() -> None:
    check_graph(capture_graph(SideCounts(fixed=True), IDS.clone()))


def test_bincount_makes_memory_of_its_own() -> None:
    """Judged by ``aten::bincount`` (reads ``flat``, returns a new tensor), not by ``aten::bincount.out``; so is the
    ``sum`` of its result."""
    gm = capture_graph(SideCounts(fixed=True), IDS.clone())
    nodes = {n.name: n for n in gm.graph.nodes}
    counts = next(n for n in gm.graph.nodes if getattr(n.target, "__name__", "") == "bincount")
    assert effect(counts).aliases is None and effect(counts).reads == (nodes["flat"],)
    summed = next(n for n in counts.users if n.op == "call_method" and n.target == "sum")
    assert effect(summed).aliases is None and root(summed) is summed
