"""A side call moved up into its stream's earlier block across a planned call on another stream (``hoist.py``).

omni-infer's six-stream decode gathers the top-k locally, then issues the local all-gather of the hidden states
and three swap rounds on three other streams, then gathers the top-k across nodes on the top-k stream again: the
second gather reads only the first's result, so it is issued in the first's block, one switch fewer (GE 21 -> 20,
the hand version's count). The planner's analysis of the reordered function decides, as for main-stream work:
``apart`` moves (the call on "other" reads only ``x``); ``conflict`` keeps its place (the call on "other" reads
the cache the moved call writes: the planner would make it wait for the moved call). Both run under the race
checker on every target spelled with events, with the guard on and off, and equal the arithmetic on one stream.
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
    def __init__(self, on: bool):
        super().__init__()
        self.on = on
        self.register_buffer("cache", torch.zeros(2, 3))

    @on_stream("side", when="self.on")
    def first(self, x: torch.Tensor) -> torch.Tensor:
        return x * 3

    @on_stream("side", when="self.on")
    def second(self, a: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
        cache.copy_(a + 1)
        return a * 2

    @on_stream("other", when="self.on")
    def elsewhere(self, x: torch.Tensor) -> torch.Tensor:
        return x - 1

    def apart(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        e = self.elsewhere(x)
        b = self.second(a, cache)
        n = m * 3
        return n + e + b + cache

    def conflict(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        e = self.elsewhere(cache)
        b = self.second(a, cache)
        n = m * 3
        return n + e + b + cache
""" + caller_source()

_EXPECTED = {
    "apart": lambda x: x * 6 + (x - 1) + x * 6 + (x * 3 + 1),
    "conflict": lambda x: x * 6 + (0 - 1) + x * 6 + (x * 3 + 1),
}


def _body(method: str, target: str = "portable") -> str:
    return method_source(transform_source(SOURCE, path="m.py", target=target), method)


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
def test_moved_across_a_call_on_another_stream(target: str) -> None:
    body = _body("apart", target)
    assert body.index("b = self.second(a, cache)") < body.index("m = x * 2") < body.index("e = self.elsewhere(x)")


def test_ge_keeps_it_where_the_move_saves_nothing() -> None:
    """On GE the first call needs no edge (it reads only what the method was given) and the second needs one (it
    writes the caller's ``cache``): moved, its edge would still stand between the two, so nothing is saved."""
    body = _body("apart", "ge")
    assert body.index("e = self.elsewhere(x)") < body.index("b = self.second(a, cache)")


def test_one_block_on_the_side_stream() -> None:
    assert _body("apart").count('runtime.stream("side"') == 1  # main: two, with a second fork


def test_kept_where_the_other_call_reads_what_it_writes() -> None:
    body = _body("conflict")
    assert body.count('runtime.stream("side"') == 2
    assert body.index("e = self.elsewhere(cache)") < body.index("b = self.second(a, cache)")


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"])
@pytest.mark.parametrize("method", sorted(_EXPECTED))
@pytest.mark.parametrize("on", [True, False])
def test_race_free_and_equal(method: str, target: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.arange(6.0).reshape(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method, on), (x,), eager_first=target in ("npugraph_ex", "cuda"))
    torch.testing.assert_close(got, _EXPECTED[method](x))
