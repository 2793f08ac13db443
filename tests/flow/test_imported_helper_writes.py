"""A function or submodule of another module of the user's package that writes its argument in place writes the
caller's tensor: a call still reading it on another stream is joined first, whether the other module is in the
run or not (a file transformed alone takes such a call to write every argument: safety never depends on which
files a run sees).

``y = self.side(x)`` then ``bump(x)`` with ``from .helpers import bump`` (or ``from . import helpers`` then
``helpers.bump(x)``), where ``helpers.py`` holds ``def bump(t): t.add_(1)``: before, the side stream could still
read ``x`` while the main stream wrote it (``imported_writes.py``). ``self.norm(x)``, whose class comes from
``helpers.py`` (or the caller's own module) and whose ``forward`` writes its input, likewise. A helper that only
reads keeps the overlap where the run holds its module. Every case runs race-checked as a package (relative
imports), transformed together and each file alone, and equals the same arithmetic on one stream.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

from codegen.driver.run import read_sources, run

HELPERS = """\
import torch
from torch import nn


def bump(t):
    t.add_(1)


def bump_first_row(t):
    bump(t[0])


def total(t):
    return t.sum()


class Bump(nn.Module):
    def forward(self, t):
        t.add_(1)
        return t


class Scale(nn.Module):
    def forward(self, t):
        return t * 2
"""

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from .helpers import Bump, Scale, bump, bump_first_row, total


class LocalBump(nn.Module):
    def forward(self, t):
        t.add_(1)
        return t


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Bump()
        self.scale = Scale()
        self.local = LocalBump()

    @on_stream("side")
    def side(self, x):
        return x * 2

    def imported_writes(self, x):
        y = self.side(x)
        bump(x)
        return y + x

    def imported_writes_a_view(self, x):
        y = self.side(x)
        bump_first_row(x)
        return y + x

    def submodule_writes(self, x):
        y = self.side(x)
        self.norm(x)
        return y + x

    def local_submodule_writes(self, x):
        y = self.side(x)
        self.local(x)
        return y + x

    def imported_reads(self, x):
        y = self.side(x)
        z = total(x) * x
        return y + z

    def submodule_reads(self, x):
        y = self.side(x)
        z = self.scale(x)
        return y + z
""" + caller_source()

OTHER = """\
import torch
from torch import nn
from npudsl import on_stream

from . import helpers


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def module_function_writes(self, x):
        y = self.side(x)
        helpers.bump(x)
        return y + x

    def module_function_reads(self, x):
        y = self.side(x)
        z = helpers.total(x) * x
        return y + z
""" + caller_source()

INIT = """\
from . import model, other


def build(method):
    return (other if method.startswith("module_function") else model).Caller(method)
"""

WRITERS = [
    "imported_writes",
    "imported_writes_a_view",
    "module_function_writes",
    "submodule_writes",
    "local_submodule_writes",
]
READERS = ["imported_reads", "module_function_reads", "submodule_reads"]


def _entry(tmp_path: Path) -> Entry:
    folder = tmp_path / "pkg_imported_writes"
    folder.mkdir()
    for name, source in (("__init__.py", INIT), ("helpers.py", HELPERS), ("model.py", MODEL), ("other.py", OTHER)):
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="imported_writes", package="pkg_imported_writes", path=folder, idioms=(), upstream=(), needs=())


def _generated(tmp_path: Path, target: str, method: str, *, alone: bool) -> tuple[str, str]:
    """(the generated package's name, the code of the module defining ``method``) under ``tmp_path / "out"``."""
    (tmp_path / "out").mkdir(exist_ok=True)
    name, codes = generated_package(_entry(tmp_path), target, tmp_path / "out", alone=alone)
    return name, codes["other.py" if method.startswith("module_function") else "model.py"]


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("method", WRITERS)
def test_a_write_through_another_module_joins_first(tmp_path: Path, method: str, alone: bool) -> None:
    """Joined right where the helper writes: the call overlaps nothing there and stays on the caller's stream."""
    assert "runtime." not in method_source(_generated(tmp_path, "portable", method, alone=alone)[1], method)


@pytest.mark.parametrize(
    ("method", "helper"),
    [
        ("imported_reads", "total(x)"),
        ("module_function_reads", "helpers.total(x)"),
        ("submodule_reads", "self.scale(x)"),
    ],
)
def test_a_reader_of_a_module_the_run_holds_keeps_the_overlap(tmp_path: Path, method: str, helper: str) -> None:
    """One fork and one join, the join after the helper: it runs beside the side stream."""
    body = method_source(_generated(tmp_path, "portable", method, alone=False)[1], method)
    assert body.count("runtime.record(") == 2 and body.count("runtime.wait(") == 2
    assert body.rindex("runtime.wait(") > body.index(helper)


def test_a_module_imported_from_its_package_is_read(tmp_path: Path) -> None:
    """``from . import helpers`` alone names ``helpers.py`` (no ``from .helpers import``): the run reads it, so
    ``helpers.total(x)``, a reader, keeps the overlap (before, the call was taken to write ``x``)."""
    folder = _entry(tmp_path).path
    files = read_sources((str(folder / name), str(folder)) for name in ("other.py", "helpers.py"))
    code = next(r.code for r in run(files, target="portable", jobs=1) if r.file.path.endswith("other.py"))
    body = method_source(code or "", "module_function_reads")
    assert body.rindex("runtime.wait(") > body.index("helpers.total(x) * x")


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    if method == "imported_writes_a_view":
        bumped = x.clone()
        bumped[0] += 1
        return x * 2 + bumped
    if method in WRITERS:
        return x * 2 + (x + 1)
    if method in ("imported_reads", "module_function_reads"):
        return x * 2 + x.sum() * x
    return x * 2 + x * 2


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", WRITERS + READERS)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    name, _ = _generated(tmp_path, target, method, alone=alone)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, _want(method, x))
