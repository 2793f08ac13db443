"""A side stream that already waited for a reused fork record, on every path to a later call, does not wait again.

A call that reuses an earlier call's fork record (``reuse.py``) makes its stream wait for it; a later call on that
stream reusing the same record waits only where no earlier wait of its stream runs on every path to it
(``codegen/lower/flow/waited_records.py``):

- ``held`` (wt35a's ``result_held``): the first ``shared`` call waits for ``route``'s record at the same point, the
  second reuses that record after the caller read the first one's result: one wait on "shared";
- ``reused_twice``: both ``shared`` calls reuse ``route``'s record across main-stream work: one wait;
- ``in_branch``: the first ``shared`` call stands in an ``if`` branch, so its wait is not on every path to the
  second call, which keeps its own;
- ``recorded_again``: ``route`` is called again between the two, recording its fork anew: the second ``shared``
  call waits for that new record (an earlier wait for the old one orders it after less work).

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


class Model(nn.Module):
    def __init__(self, on=True):
        super().__init__()
        self.on = on

    @on_stream("topk", when="self.on")
    def route(self, q):
        return q * 2

    @on_stream("shared", when="self.on")
    def shared(self, q, s):
        return q * s

    def held(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        o = self.shared(q, s)
        g = x * 5
        h = o * 2
        out = self.shared(q, s)
        y = x * 7
        return out + y + r + g + h + o

    def reused_twice(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        g = x * 5
        o = self.shared(q, s)
        k = x * 6
        h = o * 2
        out = self.shared(q, s)
        y = x * 7
        return out + y + r + g + h + o + k

    def in_branch(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        g = x * 5
        o = g
        if x.shape[0] > 1:
            o = self.shared(q, s)
        h = o * 2
        out = self.shared(q, s)
        y = x * 7
        return out + y + r + g + h + o

    def recorded_again(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        o = self.shared(q, s)
        k = x * 6
        h = o * 2
        r2 = self.route(h)
        out = self.shared(q, s)
        y = x * 7
        return out + y + r + h + o + r2 + k
""" + caller_source()

WAITS = {"held": 1, "reused_twice": 1, "in_branch": 2}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", sorted(WAITS))
def test_the_shared_stream_waits_for_the_route_record(method: str) -> None:
    body = _body(method)
    assert "m.Model.shared.fork" not in body
    waits = body.count('runtime.wait("m.Model.route.fork")')
    assert waits - 1 == WAITS[method]  # the first on "topk", then those on "shared"


def test_a_record_made_again_is_waited_for_again() -> None:
    body = _body("recorded_again")
    assert body.count('runtime.record("m.Model.route.fork")') == 2
    assert body.count('runtime.wait("m.Model.route.fork")') == 4  # one on "topk" and one on "shared" per record


def _expected(method: str, x: torch.Tensor) -> torch.Tensor:
    q, s = x * 3, x + 1
    o = q * s
    extra = x * 6 if method in ("reused_twice", "recorded_again") else 0
    if method == "recorded_again":
        return q * s + x * 7 + q * 2 + o * 2 + o + o * 2 * 2 + extra
    return q * s + x * 7 + q * 2 + x * 5 + o * 2 + o + extra


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", [*sorted(WAITS), "recorded_again"])
def test_race_free_and_exact(method: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    got = run_checked(code, "portable", lambda m: m.Caller(method, on), (x,))  # type: ignore[attr-defined]
    torch.testing.assert_close(got, _expected(method, x * 1))
