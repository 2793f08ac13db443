"""A call waits for an earlier call's fork record when nothing it needs happened on the caller's stream in
between (omni-infer's decode MoE: one record after the quantization, every stream waits for it). It records
its own when in between something binds or writes in place what it reads, stores an attribute, or reads a
result of its stream, or writes anything in place (``written_through_a_view``: ``v = q[0]`` then ``v.add_(1)``,
which also joins the call still reading ``q`` first). Every case runs under the race checker on both paths,
called with inputs its caller made right before, and equals the same arithmetic done on one stream.
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


@on_stream("comm", when="enabled")
def swap(q: torch.Tensor, enabled: bool) -> torch.Tensor:
    return q + 2


class Model(nn.Module):
    def __init__(self, large: bool, on: bool = True):
        super().__init__()
        self.large, self.on = large, on

    @on_stream("topk", when="self.on")
    def route(self, q):
        return q * 2

    @on_stream("shared", when="self.on")
    def shared(self, q, s):
        return q * s

    def quiet(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        g = q.sum() * x
        if self.large:
            out = self.shared(q, s)
        h = g * 2 + r
        if not self.large:
            out = self.shared(q, s)
        return out + h

    def written(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        g = x * 5
        s.add_(1)
        out = self.shared(q, s)
        h = g * 2
        return out + r + h

    def reads_the_stream(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        o = self.shared(q, s)
        g = x * 5
        h = o * 2
        out = self.shared(q, s)
        y = g * 7
        return out + r + h + y


    def written_through_a_view(self, x):
        q, s = x * 3, x + 1
        v = q[0]
        r = self.route(q)
        g = x * 5
        v.add_(1)
        out = self.shared(q, s)
        h = g * 2
        return out + r + h

    @on_stream("topk", when="self.on")
    def route_again(self, q):
        return q + 7

    def same_stream(self, x):
        q = x * 3
        r = self.route(q)
        g = q.sum() * x
        t = self.route_again(q)
        h = g * 2
        return r + t + h

    @on_stream("other", when="self.on")
    def other(self, g):
        return g * 4

    def chained(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        g = x * 5
        out = self.shared(q, s)
        o = self.other(g)
        h = g * 2
        return out + r + o + h

    def aliased(self, x):
        on = self.on
        q, s = x * 3, x + 1
        r = self.route(q)
        g = q.sum() * x
        w = swap(q, on)
        h = g * 2 + r
        return w + h

""" + caller_source()


def _expected(method: str, x: torch.Tensor) -> torch.Tensor:
    q, s = x * 3, x + 1
    if method == "quiet":
        return q * s + ((q.sum() * x) * 2 + q * 2)
    if method == "written_through_a_view":
        r = q * 2
        q = q.clone()
        q[0] += 1
        return q * s + r + (x * 5) * 2
    if method == "same_stream":
        return q * 2 + (q + 7) + (q.sum() * x) * 2
    if method == "chained":
        g = x * 5
        return q * s + q * 2 + g * 4 + g * 2
    if method == "aliased":
        return (q + 2) + ((q.sum() * x) * 2 + q * 2)
    if method == "written":
        return q * (s + 1) + q * 2 + (x * 5) * 2
    return q * s + q * 2 + (q * s) * 2 + (x * 5) * 7


def test_calls_after_other_work_wait_for_the_first_record() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "quiet")
    assert "m.Model.shared.fork" not in body
    assert body.count('runtime.wait("m.Model.route.fork")') == 3  # on "topk", and on "shared" on each path


def test_a_call_on_the_recording_calls_stream_needs_no_wait() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "same_stream")
    assert "route_again.fork" not in body
    assert body.count('runtime.wait("m.Model.route.fork")') == 1  # the route's own


def test_a_local_holding_the_guard_reads_its_value() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "aliased")
    assert "m.swap.fork" not in body
    assert body.count('runtime.wait("m.Model.route.fork")') == 2  # on "topk" and on "comm"


@pytest.mark.parametrize(
    ("method", "callee"), [("written", "shared"), ("reads_the_stream", "shared"), ("chained", "other")]
)
def test_a_call_records_its_own_fork_after_what_it_needs_changed(method: str, callee: str) -> None:
    """``chained``: the call right after one that waited for an earlier record reads what was made since."""
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert f'runtime.record("m.Model.{callee}.fork")' in body


@pytest.mark.parametrize("large", [True, False])
@pytest.mark.parametrize(
    "method", ["quiet", "written", "reads_the_stream", "aliased", "chained", "same_stream", "written_through_a_view"]
)
def test_race_free_and_exact(method: str, large: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    got = run_checked(code, "portable", lambda m: m.Caller(method, large), (x,))
    torch.testing.assert_close(got, _expected(method, x))
