"""Joins placed together before an ``if`` wait once where one of them covers the other.

A statement's own joins dropped those another of them covers (``transfer.minimal_joins``: a later call on the
same stream, forked after the earlier one wherever it forked, records its join after the earlier one's work). The
joins placed before an ``if`` for its branches (``early.Lookahead.due``) and for its test did not: ``b`` and ``a``
on stream ``s``, then a branch that reads ``a`` first and forks ``side_b`` again, waited for ``side_b.join`` and
``side_a.join`` back to back, where ``side_a.join`` orders both. Calls on two streams still wait for each.
Race-checked and exact both ways through the branch.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, again):
        super().__init__()
        self.again = again

    @on_stream("s")
    def side_b(self, x):
        return x * 2

    @on_stream(TAG)
    def side_a(self, x):
        return x + 5

    def forward(self, x):
        b = self.side_b(x)
        a = self.side_a(x)
        u = x * 7
        if self.again:
            u = u + a
            b = self.side_b(u)
        z = a * 2 + u
        w = b * 3
        return z + w
"""


def _code(tag: str, target: str = "portable") -> str:
    return transform_source(SOURCE.replace("TAG", repr(tag)), path="m.py", target=target)


def _waits_before_if(code: str) -> list[str]:
    lines = [line.strip() for line in method_source(code, "forward").splitlines()]
    head = lines[: lines.index("if self.again:")]
    return [line for line in head if line.startswith("runtime.wait(") and line.endswith('.join")')]


def test_one_wait_where_the_later_call_covers_the_earlier() -> None:
    assert _waits_before_if(_code("s")) == ['runtime.wait("m.Model.side_a.join")']


def test_calls_on_two_streams_wait_for_each() -> None:
    """``side_b`` on ``s`` and ``side_a`` on ``t``: no cover; ``b`` is joined where it is read, after the ``if``."""
    lines = [line.strip() for line in method_source(_code("t"), "forward").splitlines()]
    waits = [line for line in lines if line.startswith("runtime.wait(") and line.endswith('.join")')]
    assert waits == ['runtime.wait("m.Model.side_a.join")', 'runtime.wait("m.Model.side_b.join")']
    assert lines.index('runtime.wait("m.Model.side_b.join")') == lines.index("w = b * 3") - 1


def _want(x: torch.Tensor, again: bool) -> torch.Tensor:
    a, u, b = x + 5, x * 7, x * 2
    if again:
        u = u + a
        b = u * 2
    return a * 2 + u + b * 3


@pytest.mark.parametrize("again", [False, True])
@pytest.mark.parametrize("tag", ["s", "t"])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_race_free_and_exact(target: str, tag: str, again: bool) -> None:
    x = torch.randn(2, 3)
    got = trace_graph(_code(tag, target), target, lambda m: m.Model(again), (x,)).outputs
    torch.testing.assert_close(got, _want(x, again))
