"""A side call whose body writes both its object's state and an argument in place (``self.buf.add_(1)`` and
``x.mul_(3)``) makes anew what the caller passed: a call pending on another stream that reads ``x`` is joined
before it, as when the body writes the argument alone (``Site.writes``: the caller's names the call writes in
place, not the attributes of its object, which reach the caller through ``Site.names``). A body that writes only
its state leaves the reader overlapped. Every case runs under the race checker and equals one stream's
arithmetic.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

_BODIES = {
    "both": "self.buf.add_(1)\n        x.mul_(3)",
    "argument": "x.mul_(3)",
    "state": "self.buf.add_(1)",
}


def _methods(name: str, body: str) -> str:
    return f"""
    @on_stream("b")
    def {name}_write(self, x):
        {body}
        return self.buf * 1

    def m_{name}(self, x):
        y = self.read(x)
        z = self.{name}_write(x)
        return y + z
"""


SOURCE = f"""\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2, 3))

    @on_stream("a")
    def read(self, x):
        return x * 2
{"".join(_methods(n, b) for n, b in _BODIES.items())}

class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(), method

    def forward(self, x):
        return getattr(self.model, "m_" + self.method)(x * 1)
"""


def _body(name: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), f"m_{name}")


@pytest.mark.parametrize("name", ["both", "argument"])
def test_the_read_is_done_before_the_argument_is_written(name: str) -> None:
    body = _body(name)
    write = body.index(f"z = self.{name}_write(x)")
    if 'runtime.stream("a"' in body:  # the read overlapped: joined before the write
        assert body.index('runtime.wait("m.Model.read.join")') < write
    assert body.count("runtime.") == _body("argument").count("runtime.")  # as many calls as the argument alone


def test_a_body_writing_only_its_state_leaves_the_reader_overlapped() -> None:
    body = _body("state")
    assert body.index('runtime.stream("a"') < body.index("z = self.state_write(x)")
    assert body.index("z = self.state_write(x)") < body.index('runtime.wait("m.Model.read.join")')


@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("name", list(_BODIES))
def test_race_free_and_exact(name: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(name), (x,))
    buf = torch.ones(2, 3) + (1 if name != "argument" else 0)
    torch.testing.assert_close(got, x * 2 + buf)
