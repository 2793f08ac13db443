"""An input of the first call of a same-stream chain, read by the caller after the chain's join, is not kept.

``y = self.a(x)``, ``z = self.b(y)`` on one side stream: one fork before ``a``, one join after ``b``; joining
``b`` joins ``a``'s work too (the stream runs it first). Where the caller reads ``x`` again at or after that
join, ``x`` lives until the side stream is done with it, and ``record_stream(x, "side")`` is one call too
many. Where it does not (``x`` last read before the join, or read after one join but not after the other
where another path joins), the keep stays. Where one path joins the chain and another does not, the chain's
last call still covers the first where the paths meet (``state.merge``). Every case runs under the race checker on every
path and equals the same arithmetic on one stream.
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
    def __init__(self, on=True):
        super().__init__()
        self.on = on

    @on_stream("side")
    def a(self, x):
        return x * 2

    @on_stream("side")
    def b(self, x):
        return x + 1

    def read_after(self, x):
        y = self.a(x)
        z = self.b(y)
        w = x - 1
        return z + w + x

    def read_before(self, x):
        y = self.a(x)
        w = x - 1
        z = self.b(y)
        return z + w + w

    def joined_in_branch(self, x):
        y = self.a(x)
        z = self.b(y)
        if self.on:
            w = z + x
        else:
            w = x * 3
        return w + z
""" + caller_source()


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_read_after_the_chains_join_needs_no_keep() -> None:
    body = _body("read_after")
    assert "record_stream" not in body
    assert body.count("runtime.stream(") == 1 and body.count("runtime.record(") == 2


@pytest.mark.parametrize("method", ["read_before", "joined_in_branch"])
def test_the_keep_stays(method: str) -> None:
    assert 'runtime.record_stream(x, "side")' in _body(method)


def test_a_join_on_one_path_still_covers_the_chain() -> None:
    """Joined under ``if self.on:``, the chain's last call still covers the first where the paths meet (where it
    was joined, so was the first): no record or wait of the first call's own join."""
    body = _body("joined_in_branch")
    assert "m.Model.a.join" not in body
    assert body.count('runtime.wait("m.Model.b.join")') == 2


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("method", ["read_after", "read_before", "joined_in_branch"])
def test_race_free_and_exact(method: str, target: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method, on), (x,))
    z = x * 2 + 1
    want = {
        "read_after": z + (x - 1) + x,
        "read_before": z + 2 * (x - 1),
        "joined_in_branch": (z + x if on else x * 3) + z,
    }
    torch.testing.assert_close(got, want[method])
