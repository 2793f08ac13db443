"""A loop's last iteration knows ``i + 1 < len(self.layers)`` false, so a call guarded by it is not pending after the
loop (``last_iteration.py``, ``loop_fixpoint.py``).

Shaped after cann-recipes' LongCat-Flash layer loop: each layer's weight is staged one layer ahead on a prefetch
stream, under ``if nxt is not None:`` with ``nxt = self.layers[i + 1] if i + 1 < len(self.layers) else None``,
and the next iteration reads it (and so joins it). The loop ends after an iteration that staged nothing, and the
staging before it was joined there: the function's end waits for none. The loop surely runs, since the function
looked up ``self.layers[0]`` before it (a list of fixed length). Where the loop may run no iteration
(``maybe_empty``: nothing shows the list has an element) the first staging may still be pending at the end, and the
wait stays; so it does where the staging's test holds in the last iteration too (``wraps_around``: the next layer
of the last is the first). Taking that test for false there races.
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
        self.layers = nn.ModuleList(Layer() for _ in range(3))
        self.first = nn.Parameter(torch.randn(3, 3), requires_grad=False)

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

    def maybe_empty(self, x):
        h = x
        w = self.stage(self.first)
        for i, layer in enumerate(self.layers):
            nxt = self.layers[i + 1] if i + 1 < len(self.layers) else None
            if nxt is not None:
                w_next = self.stage(nxt.qweight)
            h = layer(h, w)
            if nxt is not None:
                w = w_next
        return h

    def wraps_around(self, x):
        h = x
        w = self.stage(self.layers[0].qweight)
        for i, layer in enumerate(self.layers):
            nxt = self.layers[(i + 1) % len(self.layers)]
            if nxt is not None:
                w_next = self.stage(nxt.qweight)
            h = layer(h, w)
            w = w_next
        return h + w.sum()
""" + caller_source()

_METHODS = ["ahead", "maybe_empty", "wraps_around"]


def _code(target: str = "portable") -> str:
    return generated(SOURCE, target)


def _sync(method: str, target: str) -> dict[str, int]:
    x = torch.randn(4, 3)
    return sync_counts(_code(target), target, method, x, eager_result(SOURCE, method, x))


def test_no_wait_after_a_loop_whose_last_iteration_stages_nothing() -> None:
    body = method_source(_code(), "ahead")
    assert body.count('runtime.wait("m.Model.stage.join")') == 1  # in the loop, before the layer reads ``w``
    assert body.rindex('runtime.wait("m.Model.stage.join")') < body.index("h = layer(h, w)")


@pytest.mark.parametrize("method", ["maybe_empty", "wraps_around"])
def test_the_wait_after_the_loop_stays_otherwise(method: str) -> None:
    body = method_source(_code(), method)
    assert body.rindex('runtime.wait("m.Model.stage.join")') > body.rindex("h = layer(h, w)")


def test_sync_calls() -> None:
    """Three stagings (one fork), one wait per layer and none after the loop (one keep: ``test_ahead_keeps.py``)."""
    assert dict(_sync("ahead", "portable")) == {"switch": 3, "record": 4, "wait": 4, "record_stream": 1}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", _METHODS)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert _sync(method, target)["switch"] >= 1


def test_a_test_taken_for_false_in_the_last_iteration_races_where_it_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """``wraps_around`` stages the first layer's weight again in the last iteration and reads it after the loop:
    taken for a staging that never runs then, its result is read with no wait."""
    monkeypatch.setattr("codegen.lower.flow.last_iteration._false_when_last", lambda *_: True)
    assert 'runtime.wait("m.Model.stage.join")\n        return' not in method_source(_code(), "wraps_around")
    with pytest.raises(StreamRaceError):
        _sync("wraps_around", "portable")
