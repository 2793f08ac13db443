"""A keep of an input the caller made goes where the caller's stream first allocates before the join, not at the fork.

``y = self.side(h)``, then ``if self.dense: return y`` (joined right away: nothing of the caller's stream can take
``h``'s memory while the side stream reads it), else the caller computes before the join (vllm-ascend's W8A8 layers,
``tests/corpus/vllm_w8a8_shared``). The ``record_stream`` moves before that computation, under the call's guard; it
stays at the fork where the statement right after the call allocates. The race checker counts a keep wherever it
stands, so the tests also read where it lands, count the keeps each path runs, and check that taking one out races.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.race._timeline import runtime_op
from npudsl.testing.targets import run_checked, trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, dense=False, on=True):
        super().__init__()
        self.dense, self.on = dense, on

    @on_stream("side", when="self.on")
    def side(self, h):
        return h * 2

    def deferred(self, x):
        h = x + 1
        y = self.side(h)
        if self.dense:
            return y
        z = x * 3
        return z + y

    def at_fork(self, x):
        h = x + 1
        y = self.side(h)
        z = x * 3
        if self.dense:
            return y
        return z + y

    def rebound(self, x):
        h = x + 1
        y = self.side(h)
        if self.dense:
            return y
        h = x
        z = h * 3
        return z + y

    @on_stream("aux", when="self.on")
    def other(self, x):
        return x - 1

    def other_first(self, x):
        h = x + 1
        y = self.side(h)
        if self.dense:
            return y
        w = self.other(x)
        return (y * w).sum()
""" + caller_source()

_KEEP = 'runtime.record_stream(h, "side")'


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _lines(method: str) -> list[str]:
    return [line.strip() for line in method_source(_code(), method).splitlines()]


def test_the_keep_moves_before_the_first_allocation() -> None:
    lines = _lines("deferred")
    assert lines.count(_KEEP) == 1
    at = lines.index(_KEEP)
    assert lines[at - 1] == "if self.on:" and lines[at + 1] == "z = x * 3"
    assert lines.index("if self.dense:") < at  # after the dense path's return, not in the ``with`` of the fork


def test_the_keep_stays_at_the_fork_when_the_next_statement_allocates() -> None:
    lines = _lines("at_fork")
    assert lines.count(_KEEP) == 1
    assert lines.index(_KEEP) < lines.index("y = self.side(h)") < lines.index("z = x * 3")


def test_the_keep_stays_at_the_fork_when_the_name_is_rebound_first() -> None:
    lines = _lines("rebound")  # a keep before ``z = h * 3`` would keep ``x``, not what the side stream reads
    assert lines.count(_KEEP) == 1 and lines.index(_KEEP) < lines.index("y = self.side(h)")


def test_a_call_left_on_the_callers_stream_allocates() -> None:
    lines = _lines("other_first")
    assert lines.index("if self.dense:") < lines.index(_KEEP) == lines.index("w = self.other(x)") - 1


@pytest.mark.parametrize(
    ("method", "dense", "keeps"), [("deferred", True, 0), ("deferred", False, 1), ("at_fork", True, 1)]
)
def test_the_keeps_that_run(method: str, dense: bool, keeps: int) -> None:
    trace = trace_graph(_code(), "portable", lambda m: m.Caller(method, dense, True), (torch.randn(2, 3),))
    assert [runtime_op(n) for n in trace.dynamo[0].graph.nodes].count("record_stream") == keeps


def _want(method: str, x: torch.Tensor, dense: bool) -> torch.Tensor:
    y = (x + 1) * 2
    if dense:
        return y
    return (y * (x - 1)).sum() if method == "other_first" else x * 3 + y


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("method", ["deferred", "at_fork", "rebound", "other_first"])
def test_race_free_and_exact(method: str, target: str, dense: bool, on: bool) -> None:
    x = torch.randn(2, 3)
    got = run_checked(_code(target), target, lambda m: m.Caller(method, dense, on), (x,))
    torch.testing.assert_close(got, _want(method, x, dense))


@pytest.mark.parametrize("method", ["deferred", "at_fork", "rebound"])
def test_taking_the_keep_out_races(method: str) -> None:
    code = _code()
    body = method_source(code, method)
    assert body.count(_KEEP) == 1
    without = code.replace(body, body.replace(_KEEP, "pass"))
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Caller(method, False, True), (torch.randn(2, 3),))
