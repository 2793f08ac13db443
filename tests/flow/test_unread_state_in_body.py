"""A side body giving its object's state to what the run cannot read joins before the caller reads that state.

``y = self.side(x)``, whose body calls ``extlib_body.double(self.buf)`` (a function of a module outside the run:
it may write every argument) or ``self.ext_update()`` (a method ``ExtBase``, from outside the run, defines:
``unread_methods.py``), then the caller reads ``self.buf``. Before, the index counted only what the run reads of
such a body's calls (``call_state_writes.method_state_writes`` left the unread ones out), so the caller read the
buffer while the side stream could still write it (the race checker: "written in place on stream 'side' ... is
read on stream 'default' with no wait in between"). An attribute that surely holds no tensor (``self.rope_dim =
3``, ``self.dim = dim`` of ``dim: int``, ``self.heads = shape["heads"]`` of ``shape: dict[str, int]``, and
arithmetic of them: ``scalar_attributes.py``) is no memory such a function writes: the caller reading it after
the call keeps its overlap.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source
from written_package import written_package

MODEL = (
    """\
import extlib_body
import torch
from torch import nn
from npudsl import on_stream
from extlib_body import ExtBase


class ExtModel(ExtBase):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), 2.0))

    @on_stream("side")
    def by_base_method(self, x):
        self.ext_update()
        return x * 3

    def base_method(self, x):
        y = self.by_base_method(x)
        z = x * 5
        w = self.buf * 1
        self.buf.div_(2)
        return y + z + w


class Model(nn.Module):
    def __init__(self, dim: int = 3, shape: dict[str, int] | None = None):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), 2.0))
        self.rope_dim = 3
        self.dim = dim
        self.heads = shape["heads"] if shape is not None else 2
        self.scale = self.dim ** -1 * 3

    @on_stream("side")
    def by_function(self, x):
        extlib_body.double(self.buf)
        return x * 3

    @on_stream("side")
    def by_plain(self, x):
        return x * extlib_body.product(self.rope_dim, self.dim, self.heads, self.scale)

    def function(self, x):
        y = self.by_function(x)
        z = x * 5
        w = self.buf * 1
        self.buf.div_(2)
        return y + z + w

    def plain(self, x):
        y = self.by_plain(x)
        z = x * 5
        w = x * 0 + (self.rope_dim + self.dim + self.heads + self.scale) - 5
        return y + z + w
"""
    + caller_source()
    + caller_source("ExtModel").replace("class Caller(", "class ExtCaller(")
)

EXTLIB = """\
from torch import nn


def double(t):
    t.mul_(2)


def product(*sizes):
    return sizes[0] * sizes[1] * sizes[2] * sizes[3] / 6


class ExtBase(nn.Module):
    def ext_update(self):
        self.buf.mul_(2)
"""

INIT = """\
from . import model


def build(method):
    return (model.ExtCaller if method == "base_method" else model.Caller)(method)
"""

READS = {"function": "w = self.buf", "base_method": "w = self.buf"}


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = written_package(
        tmp_path, "unread_body", target, {"model.py": MODEL, "__init__.py": INIT}, beside={"extlib_body.py": EXTLIB}
    )
    return name, codes["model.py"]


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _generated(tmp_path_factory.mktemp("portable"), "portable")[1]


@pytest.mark.parametrize("method", READS)
def test_the_read_waits_for_the_call(portable: str, method: str) -> None:
    """The call overlaps ``z = x * 5`` and is joined before the caller reads the state its body may write."""
    body = method_source(portable, method)
    before = body[: body.index(READS[method])]
    assert 'runtime.stream("side"' in before
    assert before.count("runtime.record(") <= before.count("runtime.wait(")


def test_plain_attributes_keep_the_overlap(portable: str) -> None:
    body = method_source(portable, "plain")
    assert body.index('runtime.stream("side"') < body.index("w = x * 0 + (self.rope_dim") < body.rindex("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*READS, "plain"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    """The same math as on one stream: the caller reads the state the body doubled."""
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, x * 3 + x * 5 + 4, rtol=0, atol=0)
