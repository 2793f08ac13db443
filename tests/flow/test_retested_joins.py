"""A call joined inside an ``if`` whose test reads fixed values is joined later only where that test failed.

Found porting omni-infer's MoE decode (``corpus.omni_moe_prefetch``): the shared expert's result is read under
``if next_attention_weights is not None and next_attention_weights["q_a_proj_weight"] is not None:`` (the
prefetches of the next layer's attention weights), so it is joined there, and it is returned too. The merge of
paths kept it pending after the ``if`` and the function waited for it again before the return on every path:
one wait per layer that nothing needed. Now the wait at the return re-reads the test, as the hand version does,
and runs only where it failed (``fixed_tests.py``): the parameter is never rebound and the mapping is only looked
up, so the test reads the same value again; a later ``if`` contradicting the test knows the call is joined.
Where the parameter is rebound, stored into or passed on, or the test did not run on every path to the later
join (reading it again might raise), the wait stays unconditional.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


def note(w):
    return w


class Model(nn.Module):
    def __init__(self, first):
        super().__init__()
        self.first = first

    @on_stream("side")
    def side(self, x):
        return x * 2

    def lookup(self, x, w=None):
        y = self.side(x)
        z = x + 1
        if w is not None and w["k"] is not None:
            z = z + y * w["k"]
        z = z * 3
        return z + y

    def is_none(self, x, w=None):
        y = self.side(x)
        z = x + 1
        if w is not None:
            z = z + y
        z = z * 3
        return z + y

    def in_else(self, x, w=None):
        y = self.side(x)
        z = x + 1
        if w is None:
            z = z - 1
        else:
            z = z + y
        z = z * 3
        return z + y

    def tested_again(self, x, w=None):
        y = self.side(x)
        z = x + 1
        if w is not None:
            z = z + y
        z = z * 3
        if w is not None:
            z = z + y
        if w is None:
            z = z - y
        return z

    def flagged(self, x, w=None):
        z = x + 1
        if self.first:
            y = self.side(x)
        else:
            y = x * 5
        if w is not None:
            z = z + y
        z = z * 3
        return z + y

    def rebound(self, x, w=None):
        y = self.side(x)
        z = x + 1
        if w is not None:
            z = z + y
        w = None
        z = z * 3
        return z + y

    def stored(self, x, w=None):
        y = self.side(x)
        z = x + 1
        if w is not None and w["k"] is not None:
            z = z + y * w["k"]
            w["seen"] = z
        z = z * 3
        return z + y

    def passed_on(self, x, w=None):
        y = self.side(x)
        z = x + 1
        if w is not None and note(w)["k"] is not None:
            z = z + y * w["k"]
        z = z * 3
        return z + y

    def not_on_every_path(self, x, w=None):
        y = self.side(x)
        z = x + 1
        if self.first:
            z = z + y
        elif w is not None and w["k"] is not None:
            z = z + y * w["k"]
        z = z * 3
        return z + y


class Caller(nn.Module):
    def __init__(self, method, given, first=True):
        super().__init__()
        self.model, self.method, self.given = Model(first), method, given

    def forward(self, x):
        if self.given == "none":
            w = None
        elif self.given == "empty":
            w = {"k": None}
        elif self.given == "missing":
            w = {}
        else:
            w = {"k": x * 3}
        return getattr(self.model, self.method)(x * 1, w)
"""

JOIN = 'runtime.wait("m.Model.side.join")'
_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]
_GIVEN = ["none", "empty", "full"]


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _lines(method: str) -> list[str]:
    return [line.strip() for line in method_source(_code(), method).splitlines()]


def _waits_under(method: str) -> list[str]:
    """The line above each wait of the side call's join (its ``if``)."""
    lines = _lines(method)
    return [lines[i - 1] for i, line in enumerate(lines) if line == JOIN]


@pytest.mark.parametrize(
    ("method", "want"),
    [
        ("lookup", ['if w is not None and w["k"] is not None:', 'if w is None or w["k"] is None:']),
        ("is_none", ["if w is not None:", "if w is None:"]),
        ("in_else", ["else:", "if w is None:"]),
        ("tested_again", ["if w is not None:", "if w is None:"]),
        ("flagged", ["if w is not None:", "if side_forked and w is None:"]),
    ],
)
def test_the_later_join_re_reads_the_test(method: str, want: list[str]) -> None:
    """The first wait stands in the branch that reads the result; the later one only where the test failed."""
    got = _waits_under(method)
    assert got[0].startswith(want[0][:2]) and got[1:] == want[1:], method_source(_code(), method)
    assert len(got) == 2, method_source(_code(), method)


@pytest.mark.parametrize("method", ["rebound", "stored", "passed_on", "not_on_every_path"])
def test_a_test_that_may_read_another_value_waits_on_every_path(method: str) -> None:
    """The wait before the return stands under no ``if``: the test may read another value there, or raise."""
    lines = _lines(method)
    assert lines[-2:] == [JOIN, "return z + y"], method_source(_code(), method)


def _want(method: str, x: torch.Tensor, given: str, first: bool = True) -> torch.Tensor:
    y = x * 2 if method != "flagged" or first else x * 5
    k = x * 3 if given == "full" else None
    z = x + 1
    if method == "not_on_every_path" and first:
        z = z + y
    elif method in ("lookup", "stored", "passed_on", "not_on_every_path"):
        z = z + y * k if k is not None else z
    elif method == "in_else":
        z = z - 1 if given == "none" else z + y
    elif given != "none":
        z = z + y
    z = z * 3
    if method == "tested_again":
        return z + y if given != "none" else z - y
    return z + y


@pytest.mark.parametrize("given", _GIVEN)
@pytest.mark.parametrize(
    "method",
    ["lookup", "is_none", "in_else", "tested_again", "flagged", "rebound", "stored", "passed_on", "not_on_every_path"],
)
def test_race_free_and_exact(method: str, given: str) -> None:
    x = torch.randn(2, 3)
    got = trace_graph(_code(), "portable", lambda m: m.Caller(method, given), (x,)).outputs
    torch.testing.assert_close(got, _want(method, x, given))


@pytest.mark.parametrize("given", _GIVEN)
@pytest.mark.parametrize("target", _TARGETS[1:])
@pytest.mark.parametrize("method", ["lookup", "flagged"])
def test_race_free_and_exact_on_every_target(method: str, target: str, given: str) -> None:
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    trace = trace_graph(_code(target), target, lambda m: m.Caller(method, given), (x,), eager_first=native)
    torch.testing.assert_close(trace.outputs, _want(method, x, given))


@pytest.mark.parametrize("given", ["none", "missing"])
def test_a_test_run_on_some_paths_is_not_read_again(given: str) -> None:
    """``not_on_every_path`` with ``self.first``: the ``elif`` never runs, so a lookup re-read at the return would
    raise (``KeyError`` for ``{}``)."""
    x = torch.randn(2, 3)
    got = trace_graph(_code(), "portable", lambda m: m.Caller("not_on_every_path", given, True), (x,)).outputs
    torch.testing.assert_close(got, (x + 1 + x * 2) * 3 + x * 2)


def test_re_reading_half_the_test_races() -> None:
    """Waiting only where ``w is None`` at the return leaves ``{"k": None}`` reading the result unjoined."""
    code = _code()
    without = code.replace('if w is None or w["k"] is None:', "if w is None:")
    assert without != code
    with pytest.raises(StreamRaceError):
        trace_graph(without, "portable", lambda m: m.Caller("lookup", "empty"), (torch.randn(2, 3),))
