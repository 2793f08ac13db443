"""A user event recorded on the caller's stream is a call's fork wherever it is the latest record before the call on
every path and nothing between touches what the call reads (``codegen/lower/flow/event_fork.py``).

``stage`` records ``staged`` on the caller's stream; ``side`` (``@after("staged")``) reads ``q``, made before it:

- ``work_apart``: main-stream work the call does not read stands between the record and the call: no fork;
- ``in_branch``: the call stands under an ``if`` after the record: no fork (the record is made on every path to it);
- ``read_between``: the work between makes what the call reads: the fork stays;
- ``in_loop``: the record before a loop, the call in it: the fork stays (another iteration's work came after it);
- ``recorded_in_branch``: the record is made under an ``if`` before the call: on the other path it is not, and
  the fork stays;
- ``after_record``: the statement right before records it (the case of ``test_event_fork.py``): no fork.

Every case runs under the race checker on every target, on both values of the guard, and equals the same arithmetic
on one stream.
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
from npudsl import after, on_stream, records


class Model(nn.Module):
    def __init__(self, on=True):
        super().__init__()
        self.on = on

    @records("staged")
    def stage(self, x):
        return x * 3, x + 1

    @on_stream("side", when="self.on")
    @after("staged")
    def side(self, q):
        return q * 2

    def after_record(self, x):
        q = x * 5
        a, b = self.stage(x)
        o = self.side(q)
        y = a * b
        return o + y

    def work_apart(self, x):
        q = x * 5
        a, b = self.stage(x)
        y = a * b
        o = self.side(q)
        w = y * 1
        return o + w

    def in_branch(self, x):
        q = x * 5
        a, b = self.stage(x)
        y = a * b
        if q.shape[0] > 0:
            o = self.side(q)
            w = y * 1
        else:
            o, w = q * 2, y
        return o + w

    def read_between(self, x):
        a, b = self.stage(x)
        q = x * 5
        o = self.side(q)
        y = a * b
        return o + y

    def in_loop(self, x):
        q = x * 5
        a, b = self.stage(x)
        y = a * b
        for i in range(2):
            o = self.side(q)
            y = y * 1
        return o + y

    def recorded_in_branch(self, x):
        q = x * 5
        a, b = x * 3, x + 1
        if q.shape[0] > 1:
            a, b = self.stage(x)
        y = a * b
        o = self.side(q)
        w = y * 1
        return o + w
""" + caller_source()

FORKS = {
    "after_record": False,
    "work_apart": False,
    "in_branch": False,
    "read_between": True,
    "in_loop": True,
    "recorded_in_branch": True,
}
_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", sorted(FORKS))
def test_a_fork_only_where_the_users_event_does_not_order_the_call(method: str) -> None:
    body = _body(method)
    assert 'runtime.stream("side"' in body, body  # the call still runs on its stream
    if FORKS[method]:
        assert body.count('runtime.record("m.Model.side.fork")') == 1, body
        assert body.count('runtime.wait("m.Model.side.fork")') == 1, body
    else:
        assert ".fork" not in body, body


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", sorted(FORKS))
def test_race_free_and_exact(method: str, target: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = run_checked(code, target, lambda m: m.Caller(method, on), (x,), eager_first=native)  # type: ignore[attr-defined]
    torch.testing.assert_close(got, x * 5 * 2 + (x * 3) * (x + 1))
