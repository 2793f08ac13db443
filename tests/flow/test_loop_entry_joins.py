"""What a ``for`` body joins first is waited for once, before the loop (``codegen/lower/flow/loop_entry_joins.py``).

``r = self.side(xs)``, then ``for c in xs: c.add_(1)``: the write joins the side call. On main that wait stood in
the loop's body, issued in every iteration, and once more after the loop (the path that runs no iteration); only
the header runs between the loop's start and the write, so one wait before the loop keeps the same overlap. The
same holds for a display (``for c in (a, b)``), an ``if`` on metadata whose every branch writes first, and a read
of state the side call writes in place. Where the body does work of its own first (``d = x * 2``), or the header
calls something (``self.pick(xs)``), the wait stays in the body. Every case runs race-checked on every target and
equals the same arithmetic on one stream.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import checked_outputs

from codegen.driver.api import transform_source

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(4, 3))

    @on_stream("side")
    def side(self, xs):
        return xs[0] * 2 + xs[1]

    @on_stream("side")
    def fill(self, h):
        self.buf.copy_(h)
        return h * 2

    def pick(self, xs):
        return xs

    def looped(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        for c in xs:
            c.add_(1)
        return r + z + a

    def displayed(self, x):
        a = x + 1
        b = x + 2
        r = self.side([a, b])
        z = torch.ones(x.shape) * 3
        for c in (a, b):
            c.add_(1)
        return r + z + a

    def enumerated(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        for i, c in enumerate(xs):
            if c.shape[0] > 1:
                c.add_(1)
            else:
                c.sub_(1)
        return r + z + a

    def state_read(self, x):
        a = x + 1
        r = self.fill(a)
        z = torch.ones(x.shape) * 3
        y = z
        for i in range(2):
            y = y + self.buf
        return r + y + a

    def work_first(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        for c in xs:
            d = x * 0
            c.add_(1 + d)
        return r + z + a

    def picked(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        for c in self.pick(xs):
            c.add_(1)
        return r + z + a
""" + caller_source()

BEFORE = ["looped", "displayed", "enumerated", "state_read"]
METHODS = [*BEFORE, "work_first", "picked"]
TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")
_WAIT = re.compile(r'runtime\.wait\("m\.Model\.\w+\.join"\)')


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", BEFORE)
def test_one_wait_before_the_loop(method: str) -> None:
    body = _body(method)
    waits = [m.start() for m in _WAIT.finditer(body)]
    assert len(waits) == 1, body
    assert body.index("z = ") < waits[0] < body.index("    for ")


@pytest.mark.parametrize("method", ["work_first", "picked"])
def test_the_wait_stays_in_the_body(method: str) -> None:
    """Work before the write (``d = x * 0``), or a header that calls (``self.pick(xs)``): waited in the loop."""
    body = _body(method)
    loop = body.index("    for ")
    assert all(m.start() > loop for m in _WAIT.finditer(body)), body
    assert re.search(r"for .*:\n\s+(d = x \* 0\n\s+)?runtime\.wait\(", body), body


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    """The same arithmetic, on one stream: the side call reads before the caller writes."""
    a, b = x + 1, x + 2
    if method == "state_read":
        return a * 2 + ((torch.ones(x.shape) * 3 + a) + a) + a
    return a * 2 + b + 3 + (a + 1)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", METHODS)
def test_race_free_and_exact(method: str, target: str) -> None:
    x = torch.randn(4, 3)
    got = checked_outputs(SOURCE, target, method, x)
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)
