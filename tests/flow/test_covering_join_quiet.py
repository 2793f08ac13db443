"""A tensor the caller made needs no ``record_stream`` when a later call on its stream joins it, nothing run between.

``y = self.a(t)``, ``z = self.b(y)`` on one side stream, then only a statement that runs no op before the join:
``b``'s join also joins ``a``'s work (the stream runs it first), and the caller's stream allocates nothing from
``a``'s fork to that join, so ``t`` (made by the caller, last read by ``a``) cannot go to a new allocation while
``a`` reads it (``quiet.surely_joined_at`` counts the covering join). The keep stays where the caller's stream
allocates before the join (``busy``), where one path joins late (``late_on_one_path``), and where the later join
is of a call that forked *before* ``a`` (``earlier_on_stream``: it covers nothing of ``a``'s). Every case runs
under the race checker on every path and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, on=True):
        super().__init__()
        self.on, self.scale = on, 2.0

    @on_stream("side")
    def a(self, x):
        return x * 2

    @on_stream("side")
    def b(self, x):
        return x + 1

    def quiet(self, x):
        t = x * 3
        y = self.a(t)
        z = self.b(y)
        s = self.scale
        return z * s

    def busy(self, x):
        t = x * 3
        y = self.a(t)
        z = self.b(y)
        w = x - 1
        return z + w

    def late_on_one_path(self, x):
        t = x * 3
        y = self.a(t)
        z = self.b(y)
        s = self.scale
        if self.on:
            return z * s
        w = x * 5
        return z + w

    def earlier_on_stream(self, x):
        t = x * 3
        z = self.b(x)
        y = self.a(t)
        s = self.scale
        w = z * s
        return w + y
""" + caller_source()

CASES = ["quiet", "busy", "late_on_one_path", "earlier_on_stream"]
_KEEP = 'runtime.record_stream(t, "side")'


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_a_quiet_run_to_the_chains_join_needs_no_keep() -> None:
    body = _body("quiet")
    assert "record_stream" not in body
    assert body.count("runtime.stream(") == 1 and body.count("runtime.record(") == 2
    assert body.count("runtime.wait(") == 2


@pytest.mark.parametrize("method", ["busy", "late_on_one_path", "earlier_on_stream"])
def test_the_keep_stays(method: str) -> None:
    assert body_keeps(_body(method))


def body_keeps(body: str) -> bool:
    return body.count(_KEEP) == 1


@pytest.mark.parametrize("method", ["busy", "earlier_on_stream"])
def test_without_the_keep_it_races(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable").replace(_KEEP, "pass")
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(code, "portable", lambda m: m.Caller(method, True), (torch.randn(2, 3),))


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("method", CASES)
def test_race_free_and_exact(method: str, target: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method, on), (x,))
    z = x * 6 + 1
    want = {
        "quiet": z * 2.0,
        "busy": z + (x - 1),
        "late_on_one_path": z * 2.0 if on else z + x * 5,
        "earlier_on_stream": (x + 1) * 2.0 + x * 6,
    }
    torch.testing.assert_close(got, want[method])
