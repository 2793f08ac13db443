"""A later call on a side stream issued in the earlier call's block, above main-stream work that does not touch it
(``hoist.py``), as vllm-ascend's DeepSeek-V4 MLA prolog issues its KV half: one switch and one fork, not three
switches and two forks.

``parts`` has three calls on "side" with main work between: they become one block, the main statements keep
their order, the comment above a moved call stays above the statement that followed it. Each other case keeps a
call in place for one reason: a statement between reads what it writes (``reads_written``), writes in place what
it reads (``writes_read``), rebinds what it reads (``rebinds``), may return before it (``returns_between``), or
the call waits for an event of the
user's that the main stream records between (``user_event``), or an earlier call of its callee is joined
between (``same_callee``: that wait would wait for it too). Every case runs under the race checker and
equals the same arithmetic on one stream, with the guard on and off.
"""

from __future__ import annotations

import re

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
    def __init__(self, on: bool):
        super().__init__()
        self.on = on
        self.register_buffer("cache", torch.zeros(2, 3))

    @on_stream("side", when="self.on")
    def first(self, x: torch.Tensor) -> torch.Tensor:
        return x * 3

    @on_stream("side", when="self.on")
    def second(self, a: torch.Tensor) -> torch.Tensor:
        return a + 1

    @on_stream("side", when="self.on")
    def third(self, b: torch.Tensor, x: torch.Tensor, cache: torch.Tensor) -> None:
        cache.copy_(b * x)

    @on_stream("other", when="self.on")
    def elsewhere(self, x: torch.Tensor) -> torch.Tensor:
        return x - 1

    @records("ready")
    def ready(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @on_stream("side", when="self.on")
    @after("ready")
    def after_ready(self, a: torch.Tensor) -> torch.Tensor:
        return a + 1

    def parts(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        # the main stream's part two
        b = self.second(a)
        n = m + 1
        self.third(b, x, cache)
        o = n * 3
        return o + cache

    def reads_written(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        b = self.second(a)
        n = m + cache
        self.third(b, x, cache)
        o = n * 3
        return o + cache

    def writes_read(self, x):
        cache, y = self.cache * 0, x * 1
        a = self.first(x)
        m = x * 2
        b = self.second(a)
        n = m + 1
        y.add_(0)
        self.third(b, y, cache)
        o = n * 3
        return o + cache

    def rebinds(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        b = self.second(a)
        n = m + 1
        x = x * 1
        self.third(b, x, cache)
        o = n * 3
        return o + cache

    def returns_between(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        b = self.second(a)
        n = m + 1
        if n.numel() == 0:
            return n
        self.third(b, x, cache)
        o = n * 3
        return o + cache

    def user_event(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = self.ready(x)
        b = self.after_ready(a)
        n = m + 1
        self.third(b, x, cache)
        o = n * 3
        return o + cache

    def same_callee(self, x):
        a = self.first(x)
        m = x * 2
        h = a * 2
        c = self.first(x)
        n = m + 1
        return n + h + c

    def other_stream(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        b = self.second(a)
        n = m + 1
        e = self.elsewhere(x)
        self.third(b, x, cache)
        o = n * 3
        return o + cache + e
""" + caller_source()

_SYNC = re.compile(r"runtime\.(record|wait|record_stream|stream)\(")
_EXPECTED = {
    "parts": lambda x: (x * 2 + 1) * 3 + (x * 3 + 1) * x,
    "reads_written": lambda x: (x * 2) * 3 + (x * 3 + 1) * x,
    "writes_read": lambda x: (x * 2 + 1) * 3 + (x * 3 + 1) * x,
    "rebinds": lambda x: (x * 2 + 1) * 3 + (x * 3 + 1) * x,
    "returns_between": lambda x: (x * 2 + 1) * 3 + (x * 3 + 1) * x,
    "user_event": lambda x: (x * 2 + 1) * 3 + (x * 3 + 1) * x,
    "same_callee": lambda x: x * 2 + 1 + x * 6 + x * 3,
    "other_stream": lambda x: (x * 2 + 1) * 3 + (x * 3 + 1) * x + x - 1,
}


def _body(method: str, target: str = "portable") -> str:
    return method_source(transform_source(SOURCE, path="m.py", target=target), method)


def test_three_calls_one_block() -> None:
    body = _body("parts")
    assert body.count("runtime.stream(") == 1
    assert body.count("runtime.record(") == 2  # the first call's fork, the third call's join
    assert body.count("runtime.wait(") == 2
    lines = [line.strip() for line in body.splitlines()]
    side = [lines.index(s) for s in ("a = self.first(x)", "b = self.second(a)", "self.third(b, x, cache)")]
    main = [lines.index(s) for s in ("m = x * 2", "n = m + 1", "o = n * 3")]
    assert side == sorted(side) and main == sorted(main) and side[-1] < main[0]
    assert lines[lines.index("# the main stream's part two") + 1] == "n = m + 1"


def test_the_native_targets_move_the_same_calls() -> None:
    for target in ("cuda", "npugraph_ex", "aclgraph", "ge"):
        body = _body("parts", target)
        assert body.index("self.third(b, x, cache)") < body.index("n = m + 1")  # GE: the first call needs no edge


@pytest.mark.parametrize("method", ["reads_written", "writes_read", "rebinds", "returns_between"])
def test_kept_in_place(method: str) -> None:
    body = _body(method)
    assert body.count('runtime.stream("side"') == 2  # the second call joins the first's block, the third cannot
    assert body.index("b = self.second(a)") < body.index("m = x * 2") < body.index("self.third(b,")


def test_above_a_call_on_another_stream() -> None:
    body = _body("other_stream")  # ``elsewhere`` reads only ``x``: test_hoist_other_streams.py
    assert body.index("self.third(b, x, cache)") < body.index("n = m + 1") < body.index("e = self.elsewhere(x)")


def test_not_above_the_record_it_waits_for() -> None:
    body = _body("user_event")  # the user's event orders the call after ``ready``: it stays, and so does the third
    assert body.index("m = self.ready(x)") < body.index("b = self.after_ready(a)") < body.index("n = m + 1")
    assert body.count('runtime.stream("side"') == 3


def test_not_above_a_wait_for_its_callee() -> None:
    body = _body("same_callee")  # the wait before ``h`` would wait for the second call too
    assert body.index("h = a * 2") < body.index("c = self.first(x)")
    assert body.index('runtime.wait("m.Model.first.join")') < body.index("h = a * 2")


@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", sorted(_EXPECTED))
def test_race_free_and_exact(method: str, on: bool, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method, on), (x,))
    torch.testing.assert_close(got, _EXPECTED[method](x))
