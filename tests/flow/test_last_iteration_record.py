"""A call ending a layer loop, joined right after it, records its join only in the last iteration, and keeps its
inputs only where another iteration follows (``next_iteration.py``).

Shaped after a model loop offloading each layer's output on a device-to-host stream (cann-recipes' DeepSeek-V3.2
cache offload): the offload is the last work of its iteration (what follows it only copies a name under a test
that compares), and the function waits for it once, after the loop. The wait reads the last record of the event
before it: the last iteration's. The earlier iterations' records serve no wait, and after the last iteration
nothing on the caller's stream allocates before that wait, so ``h`` needs no keep there either. The test is
``i + 1 < len(self.layers)``, a layer list whose length nothing changes after ``__init__``. Where the loop may end
early (``break``), where the event is also waited inside the loop, or where the list may grow, each iteration
records and keeps as before; a record left to the last iteration although the loop breaks races.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import NATIVE, TARGETS, eager_result, generated, sync_counts

from codegen.lower.flow import next_iteration
from npudsl import StreamRaceError

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, h):
        return torch.relu(self.proj(h))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(3))
        self.extra = nn.ModuleList([Layer()])
        self.register_buffer("host", torch.zeros(3, 4, 3))

    def grow(self):
        self.extra.append(Layer())

    @on_stream("d2h")
    def offload(self, h, i: int):
        self.host[i].copy_(h)

    def offload_each(self, x):
        h = x
        for i, layer in enumerate(self.layers):
            nxt = self.layers[i + 1] if i + 1 < len(self.layers) else None
            h = layer(h)
            self.offload(h, i)
            if nxt is not None:
                last = h
        return h + self.host.sum(0)

    def breaks_early(self, x):
        h = x
        for i, layer in enumerate(self.layers):
            h = layer(h)
            if i == 2:
                break
            self.offload(h, i)
        return h + self.host.sum(0)

    def read_in_loop(self, x):
        h = x
        for i, layer in enumerate(self.layers):
            h = layer(h) + self.host[i]
            self.offload(h, i)
        return h + self.host.sum(0)

    def grown(self, x):
        h = x
        for i, layer in enumerate(self.extra):
            h = layer(h)
            self.offload(h, i)
        return h + self.host.sum(0)
""" + caller_source()

_METHODS = ["offload_each", "breaks_early", "read_in_loop"]


def _code(target: str = "portable") -> str:
    return generated(SOURCE, target)


def _sync(method: str, target: str) -> dict[str, int]:
    """The eager reference is the second call on a native target (run once eagerly first; ``host`` keeps copies)."""
    x = torch.randn(4, 3)
    want = eager_result(SOURCE, method, x, runs=2 if target in NATIVE else 1)
    return sync_counts(_code(target), target, method, x, want)


def test_recorded_and_kept_by_the_next_iteration_test() -> None:
    body = method_source(_code(), "offload_each")
    assert "offload_again = i + 1 < len(self.layers)" in body
    assert body.index("if offload_again:") < body.index('runtime.record_stream(h, "d2h")')
    assert "if not offload_again:" in body
    assert body.index("if not offload_again:") < body.index('runtime.record("m.Model.offload.join")')


@pytest.mark.parametrize("method", ["breaks_early", "read_in_loop", "grown"])
def test_every_iteration_records_otherwise(method: str) -> None:
    body = method_source(_code(), method)
    assert "if not offload_again" not in body and 'runtime.record("m.Model.offload.join")' in body


def test_sync_calls() -> None:
    """Three layers: a fork each (6), two keeps (was three), one join record (was three), one wait: 12 (was 15)."""
    assert dict(_sync("offload_each", "portable")) == {"switch": 3, "record": 4, "wait": 4, "record_stream": 2}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", _METHODS)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert _sync(method, target)["switch"] >= 1


def test_a_record_left_to_the_last_iteration_races_where_the_loop_breaks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Taken for a loop that runs out although it may ``break``: the wait after the loop then reads no record of
    the last offload issued, and the caller's read of ``self.host`` races with it."""
    monkeypatch.setattr(next_iteration, "leaves_early", lambda *_: False)
    body = method_source(_code(), "breaks_early")
    assert "if not offload_again:" in body
    with pytest.raises(StreamRaceError):
        _sync("breaks_early", "portable")
