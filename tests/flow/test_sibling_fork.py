"""A private method's first side call goes without a fork where its one caller ran, just before, a sibling that
forked the same stream on every path (``sibling_fork.py``, ``every_path_fork.py``).

vllm-ascend's DeepSeek-V4 indexer: ``run`` (public) calls ``_cv``, whose side call writes a cache only ``if k is not
None:``, then ``_select``, whose first statement projects ``h`` on that stream. ``_cv``'s ``if`` goes inside one
block forked before it, so the stream waits for the caller's work on both paths, and ``_select``'s call needs no
fork (``k`` is None for a batch of fewer than four rows: that path is checked too). Where the rule's premise fails,
the fork stays, and each case shows it is needed: without it, the race checker finds the race.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import NATIVE, TARGETS, generated

from npudsl import StreamRaceError
from npudsl.testing.targets import trace_graph

HEAD = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def _quant(self, k, cache):
        cache[: k.shape[0]].copy_(k * 2)

    @on_stream("side")
    def _weights(self, h):
        return h * 5

    def _cv(self, h, cache):
        k = h[: h.shape[0] // 4 * 4] * 3
        if k.numel() == 0:
            k = None
        if k is not None:
            self._quant(k, cache)
        return h + 1

    def _select(self, h, q):
        w = self._weights(h)
        y = q * 2
        return w + y
"""

PAIRED = (
    HEAD
    + """
    def run(self, h):
        cache = torch.zeros_like(h)
        q = self._cv(h, cache)
        return self._select(h, q) + cache
"""
    + caller_source()
)

CASES = {  # the rule's premise fails: the fork stays, and the case races without it
    "called_twice": """
    def run(self, h):
        cache = torch.zeros_like(h)
        q = self._cv(h, cache)
        return self._select(h, q) + cache

    def direct(self, h):
        g = h * 7
        return self._select(g, g) + g
""",
    "sibling_after": """
    def run(self, h):
        cache = torch.zeros_like(h)
        y = self._select(h, h)
        q = self._cv(h, cache)
        return y + q + cache
""",
    "written_between": """
    def run(self, h):
        cache = torch.zeros_like(h)
        q = self._cv(h, cache)
        h.mul_(2)
        return self._select(h, q) + cache
""",
}
METHOD = {"called_twice": "direct", "sibling_after": "run", "written_between": "run"}
FORK = "Model._weights.fork"


def _want(x: torch.Tensor) -> torch.Tensor:
    cache = torch.zeros_like(x)
    rows = x.shape[0] // 4 * 4
    cache[:rows] = x[:rows] * 6
    return x * 5 + (x + 1) * 2 + cache


def _unforked(code: str) -> str:
    """``code`` without ``_select``'s fork: its record and its wait."""
    return "".join(line for line in code.splitlines(keepends=True) if FORK not in line)


def test_the_sibling_forks_before_its_if_and_the_call_does_not() -> None:
    code = generated(PAIRED)
    cv, select = method_source(code, "_cv"), method_source(code, "_select")
    assert FORK not in code
    assert cv.index('runtime.record("m.Model._quant.fork")') < cv.index("if k is not None:")
    assert cv.index('runtime.stream("side", 0)') < cv.index("if k is not None:")
    assert 'runtime.stream("side", 0)' in select and "record_stream(h" in select


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rows", [8, 3])
def test_race_free_and_exact(target: str, rows: int) -> None:
    x = torch.randn(rows, 3)
    code = generated(PAIRED, target)
    trace = trace_graph(code, target, lambda m: m.Caller("run"), (x,), eager_first=target in NATIVE)
    torch.testing.assert_close(trace.outputs, _want(x))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fork_stays_where_the_premise_fails(case: str) -> None:
    assert method_source(generated(HEAD + CASES[case] + caller_source()), "_select").count(FORK) == 2


@pytest.mark.parametrize("case", sorted(CASES))
def test_without_that_fork_it_races(case: str) -> None:
    code = _unforked(generated(HEAD + CASES[case] + caller_source()))
    with pytest.raises(StreamRaceError):
        trace_graph(code, "portable", lambda m: m.Caller(METHOD[case]), (torch.randn(3, 3),))
