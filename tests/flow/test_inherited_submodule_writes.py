"""A submodule that a base class in another file assigns, whose ``forward`` writes its input in place, writes the
caller's tensor: a call still reading it on another stream is joined first, transformed together or each file
alone (then nothing is known of the base: such a call is taken to write every argument).

``class Model(Base)`` with ``from .base import Base``, whose ``__init__`` makes ``self.norm = Bump()`` (``Bump``
from ``helpers.py``, which ``model.py`` does not import): ``y = self.side(x)`` then ``self.norm(x)``. Before, the
index knew the submodules of same-module bases only, so ``self.norm`` was no submodule and its call wrote nothing:
the side stream could still read ``x`` while the main stream wrote it. A base of a base (``Middle(Base)`` in
``middle.py``) likewise. A submodule that only reads keeps the overlap where the run holds the base.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

HELPERS = """\
import torch
from torch import nn


class Bump(nn.Module):
    def forward(self, t):
        t.mul_(2)
        return t


class Scale(nn.Module):
    def forward(self, t):
        return t * 3
"""

BASE = """\
from torch import nn

from .helpers import Bump, Scale


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Bump()
        self.scale = Scale()
"""

MIDDLE = """\
from .base import Base


class Middle(Base):
    pass
"""

MODEL = (
    """\
import torch
from torch import nn
from npudsl import on_stream

from .base import Base
from .middle import Middle


class Model(Base):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def base_submodule_writes(self, x):
        y = self.side(x)
        self.norm(x)
        return y + x

    def base_submodule_reads(self, x):
        y = self.side(x)
        z = self.scale(x)
        return y + z


class Deeper(Middle):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def base_of_base_writes(self, x):
        y = self.side(x)
        self.norm(x)
        return y + x
"""
    + caller_source()
    + caller_source("Deeper").replace("class Caller", "class DeeperCaller")
)

INIT = """\
from . import model


def build(method):
    return (model.DeeperCaller if method.startswith("base_of_base") else model.Caller)(method)
"""

WRITERS = ["base_submodule_writes", "base_of_base_writes"]


def _entry(tmp_path: Path) -> Entry:
    folder = tmp_path / "pkg_inherited_writes"
    folder.mkdir()
    files = {"__init__.py": INIT, "helpers.py": HELPERS, "base.py": BASE, "middle.py": MIDDLE, "model.py": MODEL}
    for name, source in files.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="inherited_writes", package="pkg_inherited_writes", path=folder, idioms=(), upstream=(), needs=())


def _generated(tmp_path: Path, target: str, *, alone: bool) -> tuple[str, str]:
    (tmp_path / "out").mkdir(exist_ok=True)
    name, codes = generated_package(_entry(tmp_path), target, tmp_path / "out", alone=alone)
    return name, codes["model.py"]


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("method", WRITERS)
def test_a_write_through_a_base_classes_submodule_joins_first(tmp_path: Path, method: str, alone: bool) -> None:
    """Joined right where the submodule writes: the call overlaps nothing and stays on the caller's stream."""
    assert "runtime." not in method_source(_generated(tmp_path, "portable", alone=alone)[1], method)


def test_a_reading_submodule_of_a_base_keeps_the_overlap(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable", alone=False)[1], "base_submodule_reads")
    assert body.rindex("runtime.wait(") > body.index("z = self.scale(x)")


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    return x * 2 + x * 2 if method in WRITERS else x * 2 + x * 3


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WRITERS, "base_submodule_reads"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    name, _ = _generated(tmp_path, target, alone=alone)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, _want(method, x))
