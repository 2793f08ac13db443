"""A method of the caller's object the run cannot read may write any of that object's state.

``y = self.side(x)``, whose body reads ``self.buf``, then, on the caller's stream, ``self.ext_update()`` where
``class Model(ExtBase)`` inherits it from a library outside the run (``ExtBase.ext_update``: ``self.buf.mul_(2)``),
``self.sub.double()`` where ``__init__`` makes ``self.sub`` of a class from outside the run (or by a factory of
it), or ``self.mid.double()`` where ``self.mid``'s class of the run inherits ``double`` from outside: before, each
such call wrote only its arguments (none), so the write ran while the side stream could still read the buffer (the
race checker: "read on stream 'side' ... and written in place on stream 'default' with no wait in between"). Now the
call writes ``self.*`` (``self.sub.*``): joined first (``unread_methods.py``). A pending call reading none of that
object's state keeps its overlap, and torch's classes stay known (their
methods write no tensor of the object: ``self.lin(x)`` of an ``nn.Linear`` the side call runs too).
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
import extlib_unread
import torch
from torch import nn
from npudsl import on_stream
from extlib_unread import ExtBase, ExtSub


def _linear():
    return nn.Linear(3, 3)


def _ext_sub():
    return ExtSub()


class Mid(ExtSub):
    def halve(self):
        self.scale.div_(2)


class Model(ExtBase):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), 2.0))
        self.register_buffer("other", torch.full((2, 3), 2.0))
        self.sub = ExtSub()
        self.made = extlib_unread.make_sub()
        self.mid = Mid()
        self.lin = nn.Linear(3, 3)
        self.made_lin = _linear()
        self.made_ext = _ext_sub()

    @on_stream("side")
    def side(self, x):
        return x * self.buf

    @on_stream("side")
    def side_sub(self, x):
        return x * self.sub.scale

    @on_stream("side")
    def side_made(self, x):
        return x * self.made.scale

    @on_stream("side")
    def side_mid(self, x):
        return x * self.mid.scale

    @on_stream("side")
    def side_made_lin(self, x):
        return x * self.buf + self.made_lin(x) * 0

    @on_stream("side")
    def side_made_ext(self, x):
        return x * self.made_ext.scale

    @on_stream("side")
    def side_lin(self, x):
        return x * self.buf + self.lin(x) * 0

    def base_method(self, x):
        y = self.side(x)
        z = x * 5
        self.ext_update()
        self.buf.div_(2)
        return y + z

    def object_method(self, x):
        y = self.side_sub(x)
        z = x * 5
        self.sub.double()
        self.sub.scale.div_(2)
        return y + z

    def factory_object(self, x):
        y = self.side_made(x)
        z = x * 5
        self.made.double()
        self.made.scale.div_(2)
        return y + z

    def inherited_from_outside(self, x):
        y = self.side_mid(x)
        z = x * 5
        self.mid.double()
        self.mid.halve()
        return y + z

    def other_object(self, x):
        y = self.side(x)
        z = x * 5
        self.sub.double()
        self.sub.scale.div_(2)
        return y + z

    def module_factory_of_outside(self, x):
        y = self.side_made_ext(x)
        z = x * 5
        self.made_ext.double()
        self.made_ext.scale.div_(2)
        return y + z

    def module_factory_of_torch(self, x):
        y = self.side_made_lin(x)
        z = x * 5
        w = self.made_lin(x)
        return y + z + w * 0

    def torch_module(self, x):
        y = self.side_lin(x)
        z = x * 5
        w = self.lin(x)
        return y + z + w * 0
""" + caller_source()

EXTLIB = """\
import torch
from torch import nn


class ExtBase(nn.Module):
    def ext_update(self):
        self.buf.mul_(2)


class ExtSub(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((2, 3), 2.0))

    def double(self):
        self.scale.mul_(2)


def make_sub():
    return ExtSub()
"""

WRITES = {  # the method -> its statement writing the state its pending call reads
    "base_method": "self.ext_update()",
    "object_method": "self.sub.double()",
    "factory_object": "self.made.double()",
    "inherited_from_outside": "self.mid.double()",
    "module_factory_of_outside": "self.made_ext.double()",  # ``_ext_sub()`` returns a class from outside
}
APART = {
    "other_object": "self.sub.double()",
    "torch_module": "w = self.lin(x)",
    "module_factory_of_torch": "w = self.made_lin(x)",  # ``_linear()`` returns an ``nn.Linear``: read as torch's
}


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = written_package(
        tmp_path, "unread_methods", target, {"model.py": MODEL}, beside={"extlib_unread.py": EXTLIB}
    )
    return name, codes["model.py"]


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _generated(tmp_path_factory.mktemp("portable"), "portable")[1]


@pytest.mark.parametrize("method", WRITES)
def test_the_call_waits_for_the_pending_call(portable: str, method: str) -> None:
    """The side call overlaps ``z = x * 5`` and is joined before the method the run cannot read."""
    body = method_source(portable, method)
    before = body[: body.index(WRITES[method])]
    assert 'runtime.stream("side"' in before
    assert before.count("runtime.record(") <= before.count("runtime.wait(")


@pytest.mark.parametrize("method", APART)
def test_other_state_keeps_the_overlap(portable: str, method: str) -> None:
    body = method_source(portable, method)
    assert body.index('runtime.stream("side"') < body.index(APART[method]) < body.rindex("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WRITES, *APART])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    """The same math as on one stream: the side call reads the state as it was before the write."""
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)
