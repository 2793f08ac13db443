"""A side call that needs no fork of its own by its stream's earlier fork must still fork where a call on a third
stream, issued between, touches its memory (``codegen/lower/flow/crossing_calls.py``).

``relay``: ``first`` forks "side", ``elsewhere`` on "other" reads ``cache``, then ``second`` on "side" writes
``cache`` in place. The caller's stream joins "other" before ``second``, but "side" waited only for the fork
recorded before ``elsewhere``: on main ``second`` waited for ``elsewhere``'s fork record (``reuse.py``) and its
write could land before ``elsewhere``'s read (the race checker: read on 'other', written on 'side', no wait in
between). ``written``: ``fill`` on "other" writes the cache ``reader`` then reads on "side" (a relay orders it;
the cache, the caller's memory, must be kept for "side"). ``own``: ``second`` writes in place the
result of ``first`` that ``elsewhere`` reads (``fork.py``: all its inputs are its stream's own). ``apart``: the
third stream reads only ``x``, and ``second`` keeps waiting for the earlier record (no new fork). Each runs
race-checked on every target, with the guard on and off, and equals the arithmetic on one stream.
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

    @on_stream("side", when="self.on")
    def bump(self, a: torch.Tensor) -> torch.Tensor:
        a.add_(1)
        return a * 2

    @on_stream("side", when="self.on")
    def reader(self, a: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
        return a + cache

    @on_stream("other", when="self.on")
    def elsewhere(self, x: torch.Tensor) -> torch.Tensor:
        return x - 1

    @on_stream("other", when="self.on")
    def fill(self, cache: torch.Tensor) -> torch.Tensor:
        cache.fill_(5)
        return cache * 1

    def relay(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        e = self.elsewhere(cache)
        k = m + 1
        b = self.second(a, cache)
        n = m * 3
        return n + e + b + cache + k

    def written(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        e = self.fill(cache)
        k = m + 1
        b = self.reader(a, cache)
        n = m * 3
        return n + e + b + k

    def own(self, x):
        a = self.first(x)
        m = x * 2
        e = self.elsewhere(a)
        k = m + 1
        b = self.bump(a)
        n = m * 3
        return n + e + b + k

    def apart(self, x):
        cache = self.cache * 0
        a = self.first(x)
        m = x * 2
        e = self.elsewhere(x)
        k = m + 1
        b = self.second(a, cache)
        return m + e + b + cache + k
""" + caller_source()

_EXPECTED = {
    "relay": lambda x: x * 6 + (0 - 1) + x * 6 + (x * 3 + 1) + x * 2 + 1,
    "written": lambda x: x * 6 + 5 + (x * 3 + 5) + x * 2 + 1,
    "own": lambda x: x * 6 + (x * 3 - 1) + (x * 3 + 1) * 2 + x * 2 + 1,
    "apart": lambda x: x * 2 + (x - 1) + x * 6 + (x * 3 + 1) + x * 2 + 1,
}
_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize(("method", "callee"), [("relay", "second"), ("own", "bump")])
def test_forks_anew_after_the_third_stream(method: str, callee: str) -> None:
    body = _body(method)
    side = body[body.index("e = self.") : body.index(f"= self.{callee}(")]
    assert f'runtime.record("m.Model.{callee}.fork")' in side
    assert f'runtime.wait("m.Model.{callee}.fork")' in side


def test_a_read_of_what_a_third_stream_wrote_waits_for_it_and_keeps_it() -> None:
    """``reader`` waits for ``fill``'s join on its own stream (a relay: ordered after the write); ``cache`` is the
    caller's memory, only written in place on "other", so it is kept for "side" (``quiet._maker``: on main it was
    taken as the other stream's own, and freed under the read)."""
    side = _body("written").split("k = m + 1")[1]
    assert side.index('runtime.wait("m.Model.fill.join")') < side.index("b = self.reader(a, cache)")
    assert 'runtime.record_stream(cache, "side")' in side


def test_no_fork_where_the_third_stream_touches_nothing_of_it() -> None:
    body = _body("apart")
    assert "second.fork" not in body


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", sorted(_EXPECTED))
@pytest.mark.parametrize("on", [True, False])
def test_race_free_and_equal(method: str, target: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.arange(6.0).reshape(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method, on), (x,), eager_first=target in ("npugraph_ex", "cuda"))
    torch.testing.assert_close(got, _EXPECTED[method](x))
