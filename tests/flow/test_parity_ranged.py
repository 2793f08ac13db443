"""A staging one iteration ahead in ``for i in range(n)`` takes parity events too, where the return waits for it.

``loop_parity.py`` gave a staging's join an event per iteration parity only where every wait after the loop could
name the last record's slot: ``(n - 1) % 2`` when the last iteration skips the staging, which is the first call's
slot only where the loop surely ran. With ``n = len(self.layers)`` nothing before ``range(n)`` shows that, so the
loop kept one event and layer ``i`` waited for layer ``i + 1``'s staging too. The wait after the loop now picks
``max(n - 1, 0) % 2``: the first call's slot where no iteration ran, the last record's where some did.
``(n - 1) % 2`` there waits for an event nobody recorded when the list is empty, and races.

The staging's argument ``self.layers[i + 1].qweight`` is the object's parameter reached by a counted index
(``counted_state.py``): no longer bound to ``qweight_1`` before the call, forked for and kept in every iteration.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from bench.sync_count import count_graph
from codegen.driver.api import transform_source
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
        self.qweight = nn.Parameter(torch.randn(3, 3), requires_grad=False)

    def forward(self, h, w):
        return torch.relu(self.proj(h) @ w)


class Model(nn.Module):
    def __init__(self, layers=4, multistream=True):
        super().__init__()
        self.multistream = multistream
        self.embed_qweight = nn.Parameter(torch.randn(3, 3), requires_grad=False)
        self.layers = nn.ModuleList(Layer() for _ in range(layers))

    @on_stream("prefetch", when="self.multistream")
    def stage(self, qweight):
        return qweight * 2

    def ranged(self, x):
        n = len(self.layers)
        h = x
        w = self.stage(self.embed_qweight)
        for i in range(n):
            if i + 1 < n:
                w_next = self.stage(self.layers[i + 1].qweight)
            h = self.layers[i].proj(h).relu()
            h = self.layers[i](h, w)
            if i + 1 < n:
                w = w_next
        return h @ w

    def ranged_tight(self, x):
        n = len(self.layers)
        h = x
        w = self.stage(self.embed_qweight)
        for i in range(n):
            if i + 1 < n:
                w_next = self.stage(self.layers[i + 1].qweight)
            h = self.layers[i](h, w)
            if i + 1 < n:
                w = w_next
        return h @ w
""" + caller_source()

PAIR = '("m.Model.stage.join", "m.Model.stage.join.2")'
_TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _want(method: str, x: torch.Tensor, layers: int, multistream: bool) -> torch.Tensor:
    namespace: dict[str, object] = {}
    exec(compile(SOURCE, "eager_m.py", "exec"), namespace)  # npudsl's decorators run eagerly, same meaning
    torch.manual_seed(0)
    model = namespace["Model"](layers, multistream)  # type: ignore[operator]
    return getattr(model, method)(x * 1)  # type: ignore[no-any-return]


def _sync(
    method: str, target: str, layers: int = 4, code: str | None = None, multistream: bool = True
) -> dict[str, int]:
    x = torch.randn(4, 3)
    want = _want(method, x, layers, multistream)

    def build(m: object) -> torch.nn.Module:
        torch.manual_seed(0)
        return m.Caller(method, layers, multistream)  # type: ignore[attr-defined, no-any-return]

    native = target in ("cuda", "npugraph_ex")  # native events are made at their first eager use
    trace = trace_graph(code or _code(target), target, build, (x,), eager_first=native)
    torch.testing.assert_close(trace.outputs, want)
    return count_graph(trace.dynamo[0])


def test_the_read_waits_for_the_last_iterations_staging_only() -> None:
    body = method_source(_code(), "ranged")
    assert f"runtime.record({PAIR}[(i + 1) % 2])" in body
    read = "h = self.layers[i].proj(h).relu()\n            if self.multistream:\n"
    assert f"{read}                runtime.wait({PAIR}[i % 2])" in body
    assert f"runtime.wait({PAIR}[max(n - 1, 0) % 2])\n        return h @ w" in body
    assert 'runtime.wait("m.Model.stage.join")' not in body


def test_one_event_where_no_work_stands_between() -> None:
    """The wait stands before the new staging (``early.py``): one event serves, as before."""
    body = method_source(_code(), "ranged_tight")
    assert "join.2" not in body and "% 2" not in body


@pytest.mark.parametrize("layers", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("target", _TARGETS)
def test_race_free_and_exact(target: str, layers: int) -> None:
    assert _sync("ranged", target, layers)["switch"] >= 1


@pytest.mark.parametrize("layers", [0, 3])
@pytest.mark.parametrize("target", _TARGETS)
def test_single_stream_when_the_guard_is_off(target: str, layers: int) -> None:
    assert _sync("ranged", target, layers, multistream=False)["switch"] == 0


def test_an_empty_loop_waits_for_the_first_calls_slot() -> None:
    """``(n - 1) % 2`` is slot 1 where ``n == 0``: no staging recorded it, and the return reads ``w`` unjoined."""
    good = f"runtime.wait({PAIR}[max(n - 1, 0) % 2])"
    code = _code()
    assert good in code
    with pytest.raises(StreamRaceError):
        _sync("ranged", "portable", layers=0, code=code.replace(good, f"runtime.wait({PAIR}[(n - 1) % 2])"))


def test_the_read_no_longer_waits_for_this_iterations_staging() -> None:
    """One event: layer ``i`` read its weight after the staging of layer ``i + 1`` recorded that event again."""
    body = method_source(_code(), "ranged")
    staged = body.index(f"runtime.record({PAIR}[(i + 1) % 2])")
    assert body.index(f"runtime.wait({PAIR}[i % 2])") > staged  # after it, but in the other slot


def test_the_next_layers_weight_is_state() -> None:
    """No ``qweight_1 = self.layers[i + 1].qweight``, no fork in the loop, no keep of it: as ``nxt.qweight``."""
    body = method_source(_code(), "ranged")
    assert "w_next = self.stage(self.layers[i + 1].qweight)" in body
    assert "qweight_1" not in body and "stage_forked" not in body
    assert body.count('runtime.record("m.Model.stage.fork")') == 1


def test_sync_calls() -> None:
    """Four layers: one fork, a record per staging, a wait per layer and at the return, two keeps of ``w``
    (``i + 2 < n``); on main, 8 records, 9 waits and 3 keeps."""
    counts = _sync("ranged", "portable")
    assert (counts["record"], counts["wait"], counts["record_stream"]) == (5, 6, 2)
