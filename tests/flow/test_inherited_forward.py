"""A child class inheriting ``forward`` from a base class in another module of the run writes what that ``forward``
writes: ``self.sub(x)`` (and ``self.sub._call_impl(x)``) where ``class Child(Base)`` in ``child.py`` and ``Base``'s
``forward`` in ``base.py`` adds 1 to its buffer ``w`` in place.

The run resolved ``self.sub(x)`` to ``Child.forward``, which ``Child`` does not define; nothing followed its bases, so
the call wrote nothing and a side call still reading ``self.sub.w`` raced with it (main: "'self.model.sub.w' is read
on stream 'side' ... and written in place on stream 'default' at base.py:11 with no wait in between"), transformed
together or each file alone. A method of a submodule's class the class does not define is now found in its bases
of the run (``inherited_methods.base_method``, asked by ``imported_writes.ModuleFunctions``), and a method of
``nn.Module`` that runs ``forward`` runs the chain's (``torch_forward_runs.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

BASE = """\
import torch
from torch import nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.full((3,), 2.0))

    def forward(self, x):
        self.w.add_(1)
        return x * self.w
"""

CHILD = """\
from .base import Base


class Child(Base):
    pass
"""

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from .child import Child


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Child()

    @on_stream("side")
    def side(self, x):
        return x * self.sub.w

    def inherited(self, x):
        y = self.side(x)
        z = self.sub(x)
        return y + z

    def inherited_call_impl(self, x):
        y = self.side(x)
        z = self.sub._call_impl(x)
        return y + z
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""


def _entry(tmp_path: Path) -> Entry:
    folder = tmp_path / "pkg_inherited_forward"
    folder.mkdir()
    for name, source in {"__init__.py": INIT, "base.py": BASE, "child.py": CHILD, "model.py": MODEL}.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(
        name="inherited_forward", package="pkg_inherited_forward", path=folder, idioms=(), upstream=(), needs=()
    )


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("method", ["inherited", "inherited_call_impl"])
def test_the_call_runs_after_the_side_call(tmp_path: Path, method: str, alone: bool) -> None:
    (tmp_path / "out").mkdir()
    _, codes = generated_package(_entry(tmp_path), "portable", tmp_path / "out", alone=alone)
    assert "runtime." not in method_source(codes["model.py"], method)


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", ["inherited", "inherited_call_impl"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    """Two compiled calls: the side call reads ``w`` before each forward adds 1 (2 then 3)."""
    (tmp_path / "out").mkdir()
    name, _ = generated_package(_entry(tmp_path), target, tmp_path / "out", alone=alone)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, x * 3 + x * 4)
