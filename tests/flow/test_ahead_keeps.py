"""A staged result is kept for the caller's stream only where the next iteration stages again (``ahead_keeps.py``).

cann-recipes' LongCat-Flash layer loop stages each layer's weight one layer ahead on a prefetch stream: iteration
``i`` waits for its weight, stages layer ``i + 1``'s (before its own read), then reads its weight. A staging does not
fork (it reads parameters only), so one issued after that read could take the weight's memory: the weight is kept
for the caller's stream, but only where such a staging follows, in iteration ``i + 1``, which stages only where
layer ``i + 2`` exists: ``if i + 2 < len(self.layers):``, as the hand version writes it. Where the staging comes
after the layer's read in the same iteration (``after_read``), it may take the memory right away: kept every
iteration. A keep left out one iteration too early races.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import TARGETS, eager_result, generated, sync_counts

from npudsl import StreamRaceError

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
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(4))

    @on_stream("prefetch")
    def stage(self, qweight):
        return qweight * 2

    def ahead(self, x):
        h = x
        w = self.stage(self.layers[0].qweight)
        for i, layer in enumerate(self.layers):
            nxt = self.layers[i + 1] if i + 1 < len(self.layers) else None
            if nxt is not None:
                w_next = self.stage(nxt.qweight)
            h = layer(h, w)
            if nxt is not None:
                w = w_next
        return h

    def after_read(self, x):
        h = x
        w = self.stage(self.layers[0].qweight)
        for i, layer in enumerate(self.layers):
            nxt = self.layers[i + 1] if i + 1 < len(self.layers) else None
            h = layer(h, w)
            if nxt is not None:
                w = self.stage(nxt.qweight)
        return h
""" + caller_source()


def _code(target: str = "portable") -> str:
    return generated(SOURCE, target)


def _sync(method: str, target: str) -> dict[str, int]:
    x = torch.randn(4, 3)
    return sync_counts(_code(target), target, method, x, eager_result(SOURCE, method, x))


def test_kept_where_the_next_iteration_stages() -> None:
    body = method_source(_code(), "ahead")
    assert "if i + 2 < len(self.layers):\n                runtime.record_stream(w, runtime.current_stream())" in body


def test_kept_every_iteration_where_a_staging_follows_the_read() -> None:
    body = method_source(_code(), "after_read")
    assert "< len(self.layers):\n" not in body.split("h = layer(h, w)")[0].split("for i, layer")[1]
    assert "runtime.record_stream(w, runtime.current_stream())" in body


def test_sync_calls() -> None:
    """Four layers: two keeps of staged weights (iterations 0 and 1; was four)."""
    assert dict(_sync("ahead", "portable"))["record_stream"] == 2


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["ahead", "after_read"])
def test_race_free_and_exact(method: str, target: str) -> None:
    assert _sync(method, target)["switch"] >= 1


def test_a_keep_left_out_one_iteration_early_races(monkeypatch: pytest.MonkeyPatch) -> None:
    """``i + 3 < n``: iteration 1 keeps no weight, and iteration 2's staging takes its memory under layer 1's read."""
    monkeypatch.setattr("codegen.lower.flow.ahead_keeps._shifted", lambda test: test.replace(" + 1 < ", " + 3 < "))
    assert "if i + 3 < len(self.layers):" in method_source(_code(), "ahead")
    with pytest.raises(StreamRaceError):
        _sync("ahead", "portable")
