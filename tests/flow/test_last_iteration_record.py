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

from bench.sync_count import count_graph
from codegen.driver.api import transform_source
from codegen.lower.flow import next_iteration
from npudsl import StreamRaceError
from npudsl.testing.targets import trace_graph

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

_TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]
_METHODS = ["offload_each", "breaks_early", "read_in_loop"]


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _want(method: str, x: torch.Tensor, runs: int) -> torch.Tensor:
    """The result of the ``runs``-th call (a native target runs once eagerly first; ``host`` keeps its copies)."""
    torch.manual_seed(0)
    model = _eager_model()
    return [getattr(model, method)(x * 1) for _ in range(runs)][-1]


def _eager_model() -> torch.nn.Module:
    namespace: dict[str, object] = {}
    exec(compile(SOURCE, "eager_m.py", "exec"), namespace)  # npudsl's decorators run eagerly, same meaning
    return namespace["Model"]()  # type: ignore[operator]


def _sync(method: str, target: str) -> dict[str, int]:
    x = torch.randn(4, 3)
    native = target in ("cuda", "npugraph_ex")
    want = _want(method, x, 2 if native else 1)

    def build(m: object) -> torch.nn.Module:
        torch.manual_seed(0)
        return m.Caller(method)  # type: ignore[attr-defined, no-any-return]

    trace = trace_graph(_code(target), target, build, (x,), eager_first=native)
    torch.testing.assert_close(trace.outputs, want)
    return count_graph(trace.dynamo[0])


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


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", _METHODS)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert _sync(method, target)["switch"] >= 1


def test_a_record_left_to_the_last_iteration_races_where_the_loop_breaks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Taken for a loop that runs out although it may ``break``: the wait after the loop then reads no record of
    the last offload issued, and the caller's read of ``self.host`` races with it."""
    monkeypatch.setattr(next_iteration, "_leaves_early", lambda *_: False)
    body = method_source(_code(), "breaks_early")
    assert "if not offload_again:" in body
    with pytest.raises(StreamRaceError):
        _sync("breaks_early", "portable")
