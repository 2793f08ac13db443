"""A call waits for an earlier fork record across calls through the caller's object that cannot change what it reads
(``object_state.py``), across results its own stream made, and across reads of such results the caller holds past
it; it records its own fork where they could (vllm-ascend's DSA prolog: the scatter after ``self.q_norm(...)`` and
``self.cv_wq_a.matmul(...)`` waited for a fork of its own).

- ``submodule_between``: ``self.norm(x)`` on the main stream changes ``norm`` only; the call reads ``proj``.
- ``submodule_written`` / ``wrapper_written``: ``self.acc(x)`` writes its own buffer in place, which the call's
  body reads (``self.acc.buf``); ``self.wrap(x)`` wraps ``acc`` (``Wrapper(self.acc)``) and writes it too.
- ``method_between``: a method of the object may change anything of it.
- ``own_result``: the call reads what its stream made (``k``) and what the caller made before the record.
- ``result_held`` / ``result_dropped``: the caller reads ``o``, the first ``shared`` call's result (joined), in
  between; held past the second call, the stream's memory under it goes to no allocation of that call; read for
  the last time there, it could.

Every case runs under the race checker, called with inputs its caller made right before, on both guard values,
and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Acc(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(3))

    def forward(self, x):
        self.buf.add_(1)
        return x * 1


class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


class Model(nn.Module):
    def __init__(self, on=True):
        super().__init__()
        self.on = on
        self.norm = nn.LayerNorm(3)
        self.proj = nn.Linear(3, 3)
        self.acc = Acc()
        self.wrap = Wrapper(self.acc)

    @on_stream("topk", when="self.on")
    def route(self, q):
        return q * 2

    @on_stream("topk", when="self.on")
    def route_more(self, k, s):
        return k * s

    @on_stream("shared", when="self.on")
    def shared(self, q, s):
        return self.proj(q) * s

    @on_stream("shared", when="self.on")
    def counted(self, q, s):
        return q * s * self.acc.buf

    def helper(self, x):
        return x + 1

    def submodule_between(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        g = self.norm(x)
        out = self.shared(q, s)
        y = x * 7
        return out + y + r + g

    def submodule_written(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        g = self.acc(x)
        out = self.counted(q, s)
        y = x * 7
        return out + y + r + g

    def wrapper_written(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        g = self.wrap(x)
        out = self.counted(q, s)
        y = x * 7
        return out + y + r + g

    def method_between(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        g = self.helper(x)
        out = self.shared(q, s)
        y = x * 7
        return out + y + r + g

    def own_result(self, x):
        q, s = x * 3, x + 1
        k = self.route(q)
        g = self.norm(x)
        out = self.route_more(k, s)
        y = x * 7
        return out + y + g

    def result_held(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        o = self.shared(q, s)
        g = x * 5
        h = o * 2
        out = self.shared(q, s)
        y = x * 7
        return out + y + r + g + h + o

    def result_dropped(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        o = self.shared(q, s)
        g = x * 5
        h = o * 2
        out = self.shared(q, s)
        y = x * 7
        return out + y + r + g + h
""" + caller_source()

REUSED = ["submodule_between", "result_held"]
OWN_FORK = ["submodule_written", "wrapper_written", "method_between", "result_dropped"]


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", REUSED)
def test_the_call_waits_for_the_earlier_record(method: str) -> None:
    body = _body(method)
    assert "m.Model.shared.fork" not in body
    assert body.count('runtime.wait("m.Model.route.fork")') in (2, 3)  # on "topk", and on "shared"


@pytest.mark.parametrize("method", OWN_FORK)
def test_the_call_records_its_own_fork(method: str) -> None:
    callee = "shared" if method in ("method_between", "result_dropped") else "counted"
    assert f'runtime.record("m.Model.{callee}.fork")' in _body(method)


def test_a_call_reading_its_streams_result_needs_no_wait() -> None:
    body = _body("own_result")
    assert "route_more.fork" not in body
    assert body.count("runtime.wait(") == 2  # the route's fork, the join of its stream


def _expected(method: str, x: torch.Tensor) -> torch.Tensor:
    q, s = x * 3, x + 1
    norm = torch.nn.functional.layer_norm(x, (3,))
    if method in ("submodule_written", "wrapper_written"):
        return q * s * 2 + q * 2 + x
    if method == "own_result":
        return q * 2 * s + norm
    return {
        "method_between": lambda: q * s + q * 2 + (x + 1),
        "result_held": lambda: q * s + q * 2 + x * 5 + q * s * 2 + q * s,
        "result_dropped": lambda: q * s + q * 2 + x * 5 + q * s * 2,
    }.get(method, lambda: q * s + q * 2 + norm)()


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", [*REUSED, *OWN_FORK, "own_result"])
def test_race_free_and_exact(method: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")

    def build(m: object) -> torch.nn.Module:
        model = m.Caller(method, on)  # type: ignore[attr-defined]
        torch.nn.init.eye_(model.model.proj.weight)
        torch.nn.init.zeros_(model.model.proj.bias)
        return model  # type: ignore[no-any-return]

    x = torch.randn(2, 3)
    got = run_checked(code, "portable", build, (x,))
    torch.testing.assert_close(got, _expected(method, x) + x * 7)
