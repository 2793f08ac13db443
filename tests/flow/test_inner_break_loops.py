"""A ``break`` inside an inner loop leaves only that loop: the outer loop's calls still run in every iteration.

``parity_loops.py`` (a staging waited for by iteration parity) and ``next_iteration.py`` (a join recorded only by
the last iteration) each took every ``break``, ``continue`` or ``return`` anywhere in the loop for an early exit of
the loop itself, where ``loop_exits.leaves_early`` (the reading ``slot_loops.py`` uses) knows a ``break`` belongs to
the innermost loop around it. An inner ``for`` that breaks out of itself made the outer staging wait for the
staging just issued (no parity slots), and the layer offload record its join in every iteration. Now both read
``leaves_early``: the inner break keeps the slots and the last-iteration record, race-free and exact; a ``break``
of the outer loop itself still takes them away (``test_last_iteration_record.py``'s ``breaks_early``).
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import TARGETS, eager_result, generated, sync_counts

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.qweight = nn.Parameter(torch.randn(3, 3), requires_grad=False)

    def forward(self, h, w):
        return torch.relu(self.proj(h) @ w)


class Model(nn.Module):
    def __init__(self, layers=4):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(layers))
        self.register_buffer("host", torch.zeros(4, 4, 3))

    @on_stream("prefetch")
    def stage(self, qweight):
        return qweight * 2

    @on_stream("d2h")
    def offload(self, h, i: int):
        self.host[i].copy_(h)

    def staged(self, x):
        h = x
        w = self.stage(self.layers[0].qweight)
        for i, layer in enumerate(self.layers):
            nxt = self.layers[i + 1] if i + 1 < len(self.layers) else None
            if nxt is not None:
                w_next = self.stage(nxt.qweight)
            for j in range(3):
                h = layer.proj(h).relu()
                if j == 1:
                    break
            h = layer(h, w)
            if nxt is not None:
                w = w_next
        return h

    def offloaded(self, x):
        h = x
        for i, layer in enumerate(self.layers):
            for j in range(3):
                h = layer.proj(h).relu()
                if j == 1:
                    break
            self.offload(h, i)
        return h + self.host.sum(0)
""" + caller_source()

PAIR = '("m.Model.stage.join", "m.Model.stage.join.2")'


def test_the_staging_waits_by_parity_across_an_inner_break() -> None:
    body = method_source(generated(SOURCE), "staged")
    assert f"runtime.record({PAIR}[(i + 1) % 2])" in body, body
    assert f"runtime.wait({PAIR}[i % 2])" in body, body


def test_the_offload_records_its_join_in_the_last_iteration_only_across_an_inner_break() -> None:
    body = method_source(generated(SOURCE), "offloaded")
    assert "offload_again = i + 1 < len(self.layers)" in body, body
    assert body.index("if not offload_again:") < body.index('runtime.record("m.Model.offload.join")'), body


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["staged", "offloaded"])
def test_race_free_and_exact(method: str, target: str) -> None:
    x = torch.randn(4, 3)
    runs = 2 if target in ("cuda", "npugraph_ex") else 1
    want = eager_result(SOURCE, method, x, runs=runs)
    assert sync_counts(generated(SOURCE, target), target, method, x, want)["switch"] >= 1
