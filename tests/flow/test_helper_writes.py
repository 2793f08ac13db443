"""A helper of the module that writes its argument in place writes the caller's tensor: a call still reading it
on another stream is joined first, and a later call reading it does not wait for a record made before it.

``y = self.side(x)`` then ``bump(x)``, where the module's ``def bump(t): t.add_(1)``: the statement spells no
write, the helper's body does (``helper_writes.py``, found porting vllm-ascend's DeepSeek-V4 DSA attention, whose
rotary embedding is such a helper). Before, the side stream could still read ``x`` while the main stream wrote it.
A helper that only reads, or writes a tensor the side call does not read, joins nothing: the overlap stays.
Every case runs race-checked, called with inputs its caller made right before, and equals the same arithmetic
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
from npudsl import on_stream


def bump(t):
    t.add_(1)


def bump_first_row(t):
    bump(t[0])


def total(t):
    return t.sum()


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    @on_stream("route")
    def route(self, q):
        return q * 3

    @on_stream("shared")
    def shared(self, q, s):
        return q * s

    def _scale(self, t):
        t.mul_(2)

    def helper_writes(self, x):
        y = self.side(x)
        bump(x)
        return y + x

    def helper_writes_a_view(self, x):
        y = self.side(x)
        bump_first_row(x)
        return y + x

    def method_writes(self, x):
        y = self.side(x)
        self._scale(x)
        return y + x

    def helper_reads(self, x):
        y = self.side(x)
        z = total(x) * x
        return y + z

    def helper_writes_another(self, x):
        z = x + 1
        y = self.side(x)
        bump(z)
        return y + z

    def written_before_the_second(self, x):
        q, s = x * 3, x + 1
        r = self.route(q)
        bump(s)
        out = self.shared(q, s)
        h = x * 5
        return out + r + h
""" + caller_source()


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", ["helper_writes", "helper_writes_a_view", "method_writes"])
def test_a_write_through_a_helper_joins_first(method: str) -> None:
    """Joined right where the helper writes: the call overlaps nothing there and stays on the caller's stream."""
    assert "runtime." not in _body(method)


@pytest.mark.parametrize(("method", "helper"), [("helper_reads", "total(x)"), ("helper_writes_another", "bump(z)")])
def test_a_helper_that_writes_nothing_the_call_reads_keeps_the_overlap(method: str, helper: str) -> None:
    """One fork and one join, the join after the helper: it runs beside the side stream."""
    body = _body(method)
    assert body.count("runtime.record(") == 2 and body.count("runtime.wait(") == 2
    assert body.index('runtime.wait("m.Model.side.join")') > body.index(helper)


def test_a_later_call_records_its_own_fork_after_a_helper_wrote_its_input() -> None:
    body = _body("written_before_the_second")
    assert body.index('runtime.record("m.Model.shared.fork")') > body.index("bump(s)")


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    if method == "helper_writes":
        return x * 2 + (x + 1)
    if method == "helper_writes_a_view":
        bumped = x.clone()
        bumped[0] += 1
        return x * 2 + bumped
    if method == "method_writes":
        return x * 2 + x * 2
    if method == "helper_reads":
        return x * 2 + x.sum() * x
    if method == "helper_writes_another":
        return x * 2 + (x + 2)
    q, s = x * 3, x + 2
    return q * s + q * 3 + x * 5


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize(
    "method",
    [
        "helper_writes",
        "helper_writes_a_view",
        "method_writes",
        "helper_reads",
        "helper_writes_another",
        "written_before_the_second",
    ],
)
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, _want(method, x))
