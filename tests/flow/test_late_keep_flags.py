"""A late keep of a call whose fork is read into a flag, past an ``if`` whose test runs no op.

cann_v4_compressor's ``sparse_attn``: the compressor forks under ``if self.compress_ratio > 1:`` (so its join reads
a flag), then only a layer of ratio 4 runs the indexer on the caller's stream before the join; a layer of ratio 128
takes ``topk_idxs = None`` and looks its metadata up by a string key. The keep of the caller's tensor goes into the
branch that allocates, under the flag: ``if self.ratio == 4:`` compares attributes and constants (a tensor compared
there would branch on data, which one captured graph cannot hold), and ``table[f"r{r}"]`` indexes a mapping. In
``allocates`` the other branch computes too, so both branches keep; taking that keep out races.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.race._timeline import runtime_op
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, ratio=4, on=True):
        super().__init__()
        self.ratio, self.on = ratio, on
        self.scales = {"r1": 1.0, "r4": 4.0, "r128": 128.0}

    @on_stream("side", when="self.on")
    def fill(self, h, out):
        out.copy_(h * 2)

    def flagged(self, x):
        h = x + 1
        out = torch.zeros_like(x)
        if self.ratio > 1:
            self.fill(h, out)
        if self.ratio == 4:
            z = x * 3
        else:
            z = x
        m = self.scales[f"r{self.ratio}"]
        return out + z + m

    def allocates(self, x):
        h = x + 1
        out = torch.zeros_like(x)
        if self.ratio > 1:
            self.fill(h, out)
        if self.ratio == 4:
            z = x * 3
        else:
            z = x - 1
        m = self.scales[f"r{self.ratio}"]
        return out + z + m

    def after_if(self, x):
        h = x + 1
        out = torch.zeros_like(x)
        z = x
        if self.ratio > 1:
            self.fill(h, out)
        if self.ratio == 4:
            z = x * 3
        w = x - 2
        return out + z + w
""" + caller_source()

_KEEP = 'runtime.record_stream(h, "side")'
_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _lines(method: str) -> list[str]:
    return [line.strip() for line in method_source(_code(), method).splitlines()]


def _want(method: str, x: torch.Tensor, ratio: int) -> torch.Tensor:
    out = (x + 1) * 2 if ratio > 1 else torch.zeros_like(x)
    z = x * 3 if ratio == 4 else (x - 1 if method == "allocates" else x)
    if method == "after_if":
        return out + z + (x - 2)
    return out + z + float(ratio)


def test_the_keep_goes_into_the_branch_that_allocates_under_the_flag() -> None:
    lines = _lines("flagged")
    assert lines.count(_KEEP) == 1
    at = lines.index(_KEEP)
    assert lines[at - 1] == "if fill_forked:" and lines[at + 1] == "z = x * 3"
    assert lines.index("if self.ratio == 4:") < at < lines.index("else:")


def test_both_branches_keep_where_both_allocate() -> None:
    lines = _lines("allocates")
    assert lines.count(_KEEP) == 2
    assert lines[lines.index("z = x - 1") - 1] == _KEEP


def test_no_path_keeps_twice() -> None:
    """A keep inside ``if self.ratio == 4:`` and another after that ``if`` would both run on a layer of ratio 4 (the
    paths from the call meet there): the keep stays at the fork, once (vllm_cp_chunked_prefill)."""
    lines = _lines("after_if")
    assert lines.count(_KEEP) == 1
    assert lines.index(_KEEP) < lines.index("self.fill(h, out)")


@pytest.mark.parametrize(
    ("method", "ratio", "keeps"),
    [("flagged", 4, 1), ("flagged", 128, 0), ("allocates", 128, 1), ("after_if", 4, 1), ("after_if", 128, 1)],
)
def test_the_keeps_that_run(method: str, ratio: int, keeps: int) -> None:
    trace = trace_graph(_code(), "portable", lambda m: m.Caller(method, ratio, True), (torch.randn(2, 3),))
    assert [runtime_op(n) for n in trace.dynamo[0].graph.nodes].count("record_stream") == keeps


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("ratio", [1, 4, 128])
@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", ["flagged", "allocates", "after_if"])
def test_race_free_and_exact(method: str, target: str, ratio: int, on: bool) -> None:
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    trace = trace_graph(_code(target), target, lambda m: m.Caller(method, ratio, on), (x,), eager_first=native)
    torch.testing.assert_close(trace.outputs, _want(method, x, ratio))


@pytest.mark.parametrize(("method", "ratio"), [("flagged", 4), ("allocates", 128)])
def test_taking_the_keep_out_races(method: str, ratio: int) -> None:
    code = _code()
    body = method_source(code, method)
    without = code.replace(body, body.replace(_KEEP, "pass"))
    with pytest.raises(StreamRaceError, match="record_stream"):
        trace_graph(without, "portable", lambda m: m.Caller(method, ratio, True), (torch.randn(2, 3),))
