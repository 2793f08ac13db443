"""An ``int`` field of a configuration dataclass, read in ``__init__``, is a number: no function writes it.

``self.n_experts = cfg.n_experts`` with ``cfg: MoEConfig`` and ``@dataclass class MoEConfig: n_experts: int`` (in
another file of the package): a side body giving ``self.n_experts`` to a function the run cannot read
(``extlib_dc.product``, which may write every argument) was taken to change it, so the caller's read of it right
after waited for the side call (main: the wait before ``w = x * 0 + self.n_experts``). The dataclass's annotation
says it holds an ``int``, as a parameter annotated ``n: int`` does (``dataclass_fields.py``): the overlap is kept,
with the files transformed together or each alone (``config.py`` then read from disk). Where the field is no plain
number (``gain: torch.Tensor``), where ``__post_init__`` stores a tensor there, or where the annotation names a
class that is no dataclass, the read waits as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

CONFIG = """\
from dataclasses import dataclass, field

import torch


@dataclass
class MoEConfig:
    n_experts: int = 2
    gain: torch.Tensor = field(default_factory=lambda: torch.full((2, 3), 2.0))


@dataclass
class Tensored:
    scale: int = 2

    def __post_init__(self):
        self.scale = torch.full((2, 3), 2.0)


class Plain:
    def __init__(self):
        self.rows = 2
"""

MODEL = """\
import extlib_dc
from torch import nn
from npudsl import on_stream

from .config import MoEConfig, Plain, Tensored


class Model(nn.Module):
    def __init__(self, cfg: MoEConfig = MoEConfig(), bad: Tensored = Tensored(), other: Plain = Plain()):
        super().__init__()
        self.n_experts = cfg.n_experts
        self.gain = cfg.gain
        self.scale = bad.scale
        self.rows = other.rows

    @on_stream("side")
    def by_count(self, x):
        return x * extlib_dc.product(self.n_experts, 1)

    @on_stream("side")
    def by_gain(self, x):
        return x * extlib_dc.product(self.gain, 1)

    @on_stream("side")
    def by_scale(self, x):
        return x * extlib_dc.product(self.scale, 1)

    @on_stream("side")
    def by_rows(self, x):
        return x * extlib_dc.product(self.rows, 1)

    def count_after(self, x):
        y = self.by_count(x)
        z = x * 5
        w = x * 0 + self.n_experts
        return y + z + w

    def gain_after(self, x):
        y = self.by_gain(x)
        z = x * 5
        w = x * 0 + self.gain
        return y + z + w

    def scale_after(self, x):
        y = self.by_scale(x)
        z = x * 5
        w = x * 0 + self.scale
        return y + z + w

    def rows_after(self, x):
        y = self.by_rows(x)
        z = x * 5
        w = x * 0 + self.rows
        return y + z + w
""" + caller_source()

EXTLIB = """\
def product(a, b):
    return a * b
"""

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

KEPT = {"count_after": "w = x * 0 + self.n_experts"}
WAITS = {"gain_after": "w = x * 0 + self.gain", "scale_after": "w = x * 0 + self.scale", "rows_after": "w = x * 0 +"}
EXPECTED = {  # what each method returns for ``x``, as on one stream
    "count_after": lambda x: x * 2 + x * 5 + 2,
    "gain_after": lambda x: x * 2 + x * 5 + 2,
    "scale_after": lambda x: x * 2 + x * 5 + 2,
    "rows_after": lambda x: x * 2 + x * 5 + 2,
}


def _generated(tmp_path: Path, target: str, *, alone: bool = False) -> tuple[str, str]:
    folder = tmp_path / "pkg_dc_scalars"
    folder.mkdir(exist_ok=True)
    for name, text in (("__init__.py", INIT), ("config.py", CONFIG), ("model.py", MODEL)):
        (folder / name).write_text(text, encoding="utf-8")
    entry = Entry(name="dc_scalars", package="pkg_dc_scalars", path=folder, idioms=(), upstream=(), needs=())
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / "extlib_dc.py").write_text(EXTLIB, encoding="utf-8")  # outside the run: read by no transform
    name, codes = generated_package(entry, target, out, alone=alone)
    return name, codes["model.py"]


@pytest.fixture(scope="module", params=[False, True], ids=["together", "alone"])
def portable(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    return _generated(tmp_path_factory.mktemp("portable"), "portable", alone=request.param)[1]


@pytest.mark.parametrize("method", KEPT)
def test_an_int_field_keeps_the_overlap(portable: str, method: str) -> None:
    body = method_source(portable, method)
    assert body.index('runtime.stream("side"') < body.index(KEPT[method]) < body.rindex("runtime.wait("), body


@pytest.mark.parametrize("method", WAITS)
def test_other_fields_wait(portable: str, method: str) -> None:
    body = method_source(portable, method)
    before = body[: body.index(WAITS[method])]
    assert 'runtime.stream("side"' in before and 'join")' in before.rpartition("z = x * 5")[2], body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", EXPECTED)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, EXPECTED[method](x), rtol=0, atol=0)
