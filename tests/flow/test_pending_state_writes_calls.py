"""A call of the caller's stream that writes in place state a pending side call reads waits for that call first.

``y = self.side(x)``, whose body reads ``self.buf``, then a statement that writes ``self.buf`` in place by a call:
a method of the object (``self.double_buf()``, whose body is ``self.buf.mul_(2)``), a submodule's method writing
its own state (``self.sub.double()`` after ``self.sub(x)``), a torch function's in-place form
(``F.relu(self.buf, inplace=True)``, ``torch.relu_(self.buf)``, ``torch.mul(self.buf, 2, out=self.buf)``,
``torch.ops.aten.mul_.Scalar(self.buf, 2)``), a helper of the module or of another module of the package writing
its argument (``double(self.buf)``, ``helpers.double(self.buf)``), a function the run cannot read
(``extlib_state.double(self.buf)``: it may write every argument), a method a base class defines
(``self.double_base()``), a local that holds the state (``v = self.buf.view(-1)``, then ``v.mul_(2)`` or
``double(v)``), a write through a view (``self.buf[:, 0].copy_``: joined on main already, as ``out=`` was).
Before, only the spellings ``state_writes.py`` named itself (an ATen method of the state, ``out=``, a store, ``+=``)
joined; every other write ran on the main stream while the side stream could still read the buffer (the race
checker: "read on stream 'side' ... and written in place on stream 'default' with no wait in between"). Such a call
writing state the pending call does not read keeps the overlap.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source
from written_package import written_package

MODEL = """\
import extlib_state
import torch
import torch.nn.functional as F
from torch import nn
from npudsl import on_stream

from . import helpers


def double(t):
    t.mul_(2)


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((2, 3), 2.0))

    @on_stream("side")
    def forward(self, x):
        return x * self.scale

    def double(self):
        self.scale.mul_(2)

    def halve(self):
        self.scale.div_(2)


class Base(nn.Module):
    def double_base(self):
        self.buf.mul_(2)


class Model(Base):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), 2.0))
        self.register_buffer("other", torch.full((2, 3), 2.0))
        self.sub = Sub()

    @on_stream("side")
    def side(self, x):
        return x * self.buf

    def double_buf(self):
        self.buf.mul_(2)

    def double_other(self):
        self.other.mul_(2)

    def own_method(self, x):
        y = self.side(x)
        z = x * 5
        self.double_buf()
        self.buf.div_(2)
        return y + z

    def submodule_method(self, x):
        y = self.sub(x)
        z = x * 5
        self.sub.double()
        self.sub.halve()
        return y + z

    def relu_inplace(self, x):
        y = self.side(x)
        z = x * 5
        F.relu(self.buf, inplace=True)
        return y + z

    def torch_relu_(self, x):
        y = self.side(x)
        z = x * 5
        torch.relu_(self.buf)
        return y + z

    def torch_out(self, x):
        y = self.side(x)
        z = x * 5
        torch.mul(self.buf, 2, out=self.buf)
        self.buf.div_(2)
        return y + z

    def aten_op(self, x):
        y = self.side(x)
        z = x * 5
        torch.ops.aten.mul_.Scalar(self.buf, 2)
        self.buf.div_(2)
        return y + z

    def module_helper(self, x):
        y = self.side(x)
        z = x * 5
        double(self.buf)
        self.buf.div_(2)
        return y + z

    def package_helper(self, x):
        y = self.side(x)
        z = x * 5
        helpers.double(self.buf)
        self.buf.div_(2)
        return y + z

    def unknown_function(self, x):
        y = self.side(x)
        z = x * 5
        extlib_state.double(self.buf)
        self.buf.div_(2)
        return y + z

    def through_a_view(self, x):
        y = self.side(x)
        z = x * 5
        self.buf[:, 0].copy_(self.other[:, 0] * 2)
        self.buf.fill_(2.0)
        return y + z

    def inherited(self, x):
        y = self.side(x)
        z = x * 5
        self.double_base()
        self.buf.div_(2)
        return y + z

    def local_view(self, x):
        v = self.buf.view(-1)
        y = self.side(x)
        z = x * 5
        v.mul_(2)
        self.buf.div_(2)
        return y + z

    def local_helper(self, x):
        v = self.buf.view(-1)
        y = self.side(x)
        z = x * 5
        double(v)
        self.buf.div_(2)
        return y + z

    def other_method(self, x):
        y = self.side(x)
        z = x * 5
        self.double_other()
        self.other.div_(2)
        return y + z

    def other_helper(self, x):
        y = self.side(x)
        z = x * 5
        helpers.double(self.other)
        self.other.div_(2)
        return y + z
""" + caller_source()

HELPERS = """\
def double(t):
    t.mul_(2)
"""

EXTLIB = HELPERS

WRITES = {  # the method -> its first statement writing the state its call reads
    "own_method": "self.double_buf()",
    "submodule_method": "self.sub.double()",
    "relu_inplace": "F.relu(self.buf, inplace=True)",
    "torch_relu_": "torch.relu_(self.buf)",
    "torch_out": "torch.mul(self.buf, 2, out=self.buf)",
    "aten_op": "torch.ops.aten.mul_.Scalar(self.buf, 2)",
    "module_helper": "double(self.buf)",
    "package_helper": "helpers.double(self.buf)",
    "unknown_function": "extlib_state.double(self.buf)",
    "through_a_view": "self.buf[:, 0].copy_(",
    "inherited": "self.double_base()",
    "local_view": "v.mul_(2)",
    "local_helper": "double(v)",
}
APART = {"other_method": "self.double_other()", "other_helper": "helpers.double(self.other)"}


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = written_package(
        tmp_path, "state_calls", target, {"model.py": MODEL, "helpers.py": HELPERS}, beside={"extlib_state.py": EXTLIB}
    )
    return name, codes["model.py"]


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _generated(tmp_path_factory.mktemp("portable"), "portable")[1]


@pytest.mark.parametrize("method", WRITES)
def test_the_write_waits_for_the_call(portable: str, method: str) -> None:
    """No side-stream call still pending at the write: joined before it."""
    body = method_source(portable, method)
    before = body[: body.index(WRITES[method])]
    assert 'runtime.stream("side"' in before  # the call overlaps ``z = x * 5``
    assert before.count("runtime.record(") <= before.count("runtime.wait(")


@pytest.mark.parametrize("method", APART)
def test_a_write_of_other_state_keeps_the_overlap(portable: str, method: str) -> None:
    body = method_source(portable, method)
    assert body.index('runtime.stream("side"') < body.index(APART[method]) < body.rindex("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WRITES, *APART])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    """The same math as on one stream: the call reads the state as it was before the write."""
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)
