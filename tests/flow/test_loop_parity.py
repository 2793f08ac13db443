"""A weight staged one layer ahead is waited for in the slot of its iteration's parity (``loop_parity.py``).

cann-recipes' LongCat-Flash layer loop stages layer ``i + 1``'s weight while layer ``i`` computes. Where work stands
between the staging and the read of the weight staged last iteration, one join event made that read wait for the
staging just issued too (``runtime.wait("m.Model.stage.join")`` after its record): layer ``i`` waited for layer
``i + 1``'s weight. Now the loop's staging records ``(J, J_2)[(i + 1) % 2]`` and the read waits for ``[i % 2]``.
Where no work stands between them (``early.py`` waits before the new staging: ``tight``), nothing changes. Race-free
and exact for one to four layers on every event target; each slot's record is needed.
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
    def __init__(self, layers=4, multistream=True):
        super().__init__()
        self.multistream = multistream
        self.layers = nn.ModuleList(Layer() for _ in range(layers))

    @on_stream("prefetch", when="self.multistream")
    def stage(self, qweight):
        return qweight * 2

    def apart(self, x):
        h = x
        w = self.stage(self.layers[0].qweight)
        for i, layer in enumerate(self.layers):
            nxt = self.layers[i + 1] if i + 1 < len(self.layers) else None
            if nxt is not None:
                w_next = self.stage(nxt.qweight)
            h = layer.proj(h).relu()
            h = layer(h, w)
            if nxt is not None:
                w = w_next
        return h

    def every(self, x):
        h = x
        w = self.stage(self.layers[0].qweight)
        for i, layer in enumerate(self.layers):
            w_next = self.stage(layer.qweight)
            h = layer.proj(h).relu()
            h = layer(h, w)
            w = w_next
        return h @ w

    def ranged(self, x):
        n = len(self.layers)
        h = x
        w = self.stage(self.layers[0].qweight)
        for i in range(n):
            if i + 1 < n:
                w_next = self.stage(self.layers[i + 1].qweight)
            h = self.layers[i].proj(h).relu()
            h = self.layers[i](h, w)
            if i + 1 < n:
                w = w_next
        return h @ w

    def tight(self, x):
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
""" + caller_source()

PAIR = '("m.Model.stage.join", "m.Model.stage.join.2")'


def _code(target: str = "portable") -> str:
    return generated(SOURCE, target)


def _sync(
    method: str, target: str, layers: int = 4, code: str | None = None, multistream: bool = True
) -> dict[str, int]:
    x = torch.randn(4, 3)
    want = eager_result(SOURCE, method, x, layers, multistream)
    return sync_counts(code or _code(target), target, method, x, want, layers, multistream)


def test_the_read_waits_for_the_last_iterations_staging_only() -> None:
    body = method_source(_code(), "apart")
    assert f"runtime.record({PAIR}[(i + 1) % 2])" in body
    read = "h = layer.proj(h).relu()\n            if self.multistream:\n"
    assert f"{read}                runtime.wait({PAIR}[i % 2])" in body
    assert 'runtime.wait("m.Model.stage.join")' not in body
    assert "record_stream(w_next" not in body  # this iteration's staging is not joined there: not kept


def test_a_staging_in_every_iteration_waits_for_its_last_after_the_loop() -> None:
    body = method_source(_code(), "every")
    assert f"runtime.wait({PAIR}[i % 2])" in body
    assert f"runtime.wait({PAIR}[len(self.layers) % 2])\n        return h @ w" in body


def test_one_event_where_slots_are_not_needed() -> None:
    """``tight``: the wait stands before the new staging (``early.py``), one event serves, as before."""
    body = method_source(_code(), "tight")
    assert "join.2" not in body and "% 2" not in body


def test_a_range_loop_not_surely_entered_takes_slots() -> None:
    """``ranged``: nothing before ``range(n)`` shows ``n >= 1``; the return's wait picks ``max(n - 1, 0) % 2``
    (tests/flow/test_parity_ranged.py)."""
    body = method_source(_code(), "ranged")
    assert f"runtime.wait({PAIR}[max(n - 1, 0) % 2])\n        return h @ w" in body


@pytest.mark.parametrize("layers", [1, 2, 3, 4])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["apart", "every", "ranged"])
def test_race_free_and_exact(method: str, target: str, layers: int) -> None:
    assert _sync(method, target, layers)["switch"] >= 1


@pytest.mark.parametrize("layers", [1, 3])
@pytest.mark.parametrize("target", TARGETS)
def test_single_stream_when_the_guard_is_off(target: str, layers: int) -> None:
    assert _sync("apart", target, layers, multistream=False)["switch"] == 0


def test_sync_calls() -> None:
    """Four layers: the same calls as with one event (the wait picks its slot)."""
    counts = _sync("apart", "portable")
    assert (counts["record"], counts["wait"], counts["record_stream"]) == (5, 5, 2)


def test_each_slot_is_recorded() -> None:
    """A staging recording one event while the reads pick their parity's: layer 1 waits for a slot no staging
    recorded, and reads its weight while it is still being staged."""
    code = _code().replace(f"runtime.record({PAIR}[(i + 1) % 2])", 'runtime.record("m.Model.stage.join")')
    with pytest.raises(StreamRaceError):
        _sync("apart", "portable", code=code)
