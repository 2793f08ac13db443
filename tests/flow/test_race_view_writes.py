"""A side body that writes its parameter through a view writes the caller's tensor (``param_writes.py``).

``a, b = x.chunk(2); a.mul_(2)``, ``v = x.view(-1); v.add_(1)``, ``x.transpose(0, 1).copy_(...)``, a view (or the
tensor) passed to a function of the module that writes it (``helper(x[0])``, ``self.fill(v)``, one call further:
``twice``): each writes the caller's ``y``, which the caller reads right after the call. Counted as written, the
call makes ``y`` anew, and the caller's read waits for it (here: the call stays on the caller's stream, having
nothing to overlap). Where the body writes only a tensor of its own (``x.view(-1) * 1`` is arithmetic, a new
tensor), reads its views only, or passes them to a function that only reads them, the call still overlaps the
caller's read. Every case runs under the race checker (portable and GE's stand-in) and equals the same
arithmetic on one stream.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

_SIDES = """\
    @on_stream("side")
    def chunked(self, x):
        a, b = x.chunk(2)
        a.mul_(2)
        return x * 3

    @on_stream("side")
    def viewed(self, x):
        v = x.view(-1)
        v.add_(1)
        return x * 3

    @on_stream("side")
    def transposed(self, x):
        x.transpose(0, 1).copy_(torch.ones(3, 4))
        return x * 3

    @on_stream("side")
    def looped(self, x):
        for part in x.split(2):
            part.add_(1)
        return x * 3

    @on_stream("side")
    def listed(self, x):
        parts = []
        parts.append(x[0])
        parts[0].zero_()
        return x * 3

    @on_stream("side")
    def passed(self, x):
        helper(x[0])
        return x * 3

    @on_stream("side")
    def passed_view(self, x):
        v = x.view(-1)
        self.fill(v)
        return x * 3

    @on_stream("side")
    def passed_twice(self, x):
        twice(x.t())
        return x * 3

    @on_stream("side")
    def own(self, x):
        v = x.view(-1) * 1
        v.add_(1)
        return x * 3 + v.sum()

    @on_stream("side")
    def reads_views(self, x):
        a, b = x.chunk(2)
        c = a.view(-1)
        return x * 3 + c.sum() * 0

    @on_stream("side")
    def passed_read(self, x):
        return reader(x[0]) * 0 + x * 3
"""

_WRITES = ["chunked", "viewed", "transposed", "looped", "listed", "passed", "passed_view", "passed_twice"]
_READS = ["own", "reads_views", "passed_read"]
_CALLERS = "".join(
    f"""
    def m_{name}(self, x):
        y = x * 1
        z = self.{name}(y)
        w = y * 2
        return z + w
"""
    for name in [*_WRITES, *_READS]
)

SOURCE = f"""\
import torch
from torch import nn
from npudsl import on_stream


def helper(t):
    t.mul_(2)


def twice(t):
    helper(t[0])


def reader(t):
    return t.sum()


class Model(nn.Module):
    def fill(self, t):
        t.fill_(1.0)

{_SIDES}{_CALLERS}

class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(), method

    def forward(self, x):
        return getattr(self.model, "m_" + self.method)(x * 1)
"""


def _expected(name: str, x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    if name == "chunked":
        y[:2] *= 2
    elif name in ("viewed", "looped"):
        y += 1
    elif name in ("transposed", "passed_view"):
        y.fill_(1.0)
    elif name == "listed":
        y[0] = 0
    elif name == "passed":
        y[0] *= 2
    elif name == "passed_twice":
        y[:, 0] *= 2
    z = y * 3 + (y.view(-1) * 1 + 1).sum() if name == "own" else y * 3
    return z + y * 2


@pytest.mark.parametrize("name", _WRITES)
def test_the_read_after_a_write_through_a_view_waits(name: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), f"m_{name}")
    assert "runtime.stream(" not in body  # nothing to overlap: the read needs what the call wrote


@pytest.mark.parametrize("name", _READS)
def test_a_body_that_writes_no_view_of_its_parameter_still_overlaps(name: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), f"m_{name}")
    assert (
        body.index("runtime.stream(") < body.index("w = y * 2") < body.index('runtime.wait("m.Model.' + name + ".join")
    )


@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("name", [*_WRITES, *_READS])
def test_race_free_and_exact(name: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(4, 3)
    got = run_checked(code, target, lambda m: m.Caller(name), (x,))
    torch.testing.assert_close(got, _expected(name, x))
