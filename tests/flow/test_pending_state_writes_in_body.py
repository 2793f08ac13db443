"""A side call whose body writes its object's state through a call joins before the caller reads that state.

``y = self.side(x)``, whose body calls ``self.double_buf()`` (a method of the object: ``self.buf.mul_(2)``),
``double(self.buf)`` (a helper of the module writing its argument), ``helpers.double(self.buf)`` (of another module
of the package) or ``self.sub.double()`` (a submodule's method writing its own ``scale``), then the caller reads
``self.buf`` (``self.sub.scale``). Before, the index named only what the body writes by its own spelling
(``self.buf.mul_(2)``), so the caller read the buffer while the side stream could still write it (the race
checker: "written in place on stream 'side' ... is read on stream 'default' with no wait in between"). The body's
calls are now read as a caller statement's are (``call_state_writes.py``, settled across the run's files in
``codegen/index/across_files.py``). A body writing state the caller does not read keeps the overlap.
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
import torch
from torch import nn
from npudsl import on_stream

from . import helpers


def double(t):
    t.mul_(2)


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((2, 3), 2.0))

    def double(self):
        self.scale.mul_(2)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), 2.0))
        self.register_buffer("other", torch.full((2, 3), 2.0))
        self.sub = Sub()

    def double_buf(self):
        self.buf.mul_(2)

    @on_stream("side")
    def by_method(self, x):
        self.double_buf()
        return x * 3

    @on_stream("side")
    def by_helper(self, x):
        double(self.buf)
        return x * 3

    @on_stream("side")
    def by_package_helper(self, x):
        helpers.double(self.buf)
        return x * 3

    @on_stream("side")
    def by_submodule(self, x):
        self.sub.double()
        return x * 3

    def method(self, x):
        y = self.by_method(x)
        z = x * 5
        w = self.buf * 1
        self.buf.div_(2)
        return y + z + w

    def helper(self, x):
        y = self.by_helper(x)
        z = x * 5
        w = self.buf * 1
        self.buf.div_(2)
        return y + z + w

    def package_helper(self, x):
        y = self.by_package_helper(x)
        z = x * 5
        w = self.buf * 1
        self.buf.div_(2)
        return y + z + w

    def submodule(self, x):
        y = self.by_submodule(x)
        z = x * 5
        w = self.sub.scale * 1
        self.sub.scale.div_(2)
        return y + z + w

    def other_state(self, x):
        y = self.by_method(x)
        z = x * 5
        w = self.other * 2
        self.buf.div_(2)
        return y + z + w
""" + caller_source()

HELPERS = """\
def double(t):
    t.mul_(2)
"""

READS = {"method": "w = self.buf", "helper": "w = self.buf", "package_helper": "w = self.buf", "submodule": "w ="}


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = written_package(tmp_path, "state_in_body", target, {"model.py": MODEL, "helpers.py": HELPERS})
    return name, codes["model.py"]


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _generated(tmp_path_factory.mktemp("portable"), "portable")[1]


@pytest.mark.parametrize("method", READS)
def test_the_read_waits_for_the_call(portable: str, method: str) -> None:
    """The call overlaps ``z = x * 5`` and is joined before the caller reads the state its body wrote."""
    body = method_source(portable, method)
    before = body[: body.index(READS[method])]
    assert 'runtime.stream("side"' in before
    assert before.count("runtime.record(") <= before.count("runtime.wait(")


def test_other_state_keeps_the_overlap(portable: str) -> None:
    body = method_source(portable, "other_state")
    assert body.index('runtime.stream("side"') < body.index("w = self.other * 2") < body.rindex("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*READS, "other_state"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    """The same math as on one stream: the caller reads the state the body doubled."""
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, x * 3 + x * 5 + 4, rtol=0, atol=0)
