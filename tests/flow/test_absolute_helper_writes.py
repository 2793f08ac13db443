"""Writes in place that a caller reaches through an absolute import, another module's helper, or a method of an
object its ``__init__`` made: a call still reading the tensor on another stream is joined first.

``y = self.side(x)`` then ``bump(x)`` with ``from pkg.helpers import bump`` (``helpers.py`` in the run: an
absolute import of the user's own package), ``bump_through(x)`` whose body calls ``deep.bump(t)`` of a third
module, ``self.cache.update(x)`` where ``__init__`` made ``self.cache = Cache()`` and ``Cache.update`` writes its
argument, and ``bump(x)`` of a module outside the run (a third-party library, here ``extlib``): before, each was
taken to write nothing and the side stream could still read ``x`` while the main stream wrote it
(``module_functions.py``). A top-level module importing its sibling file (``from top_helpers import bump``) is
the same. A helper that only reads keeps the overlap where the run holds its module. Every case runs
race-checked, transformed together and each file alone, and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source

from codegen.driver.run import read_sources, run

DEEP = """\
def bump(t):
    t.add_(1)


def total(t):
    return t.sum()
"""

HELPERS = """\
from PKG.deep import bump as deep_bump

from . import deep


def bump(t):
    t.add_(1)


def total(t):
    return t.sum()


def bump_through(t):
    deep_bump(t)


def bump_through_module(t):
    deep.bump(t[0])


def total_through(t):
    return deep.total(t)


class Cache:
    def update(self, t):
        t.add_(1)

    def peek(self, t):
        return t.sum()
"""

EXTLIB = """\
def bump(t):
    t.add_(1)
"""

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream
from EXT import bump as ext_bump
from PKG import helpers
from PKG.helpers import Cache, bump, bump_through, total, total_through

from .helpers import bump_through_module


def bumped(t):
    t.add_(1)
    return t


class LocalCache:
    def update(self, t):
        t.add_(1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = Cache()
        self.local_cache = LocalCache()

    @on_stream("side")
    def side(self, x):
        return x * 2

    @on_stream("side")
    def side_bumps(self, x):
        bump(x)
        return x * 2

    def absolute_writes(self, x):
        y = self.side(x)
        bump(x)
        return y + x

    def absolute_module_writes(self, x):
        y = self.side(x)
        helpers.bump(x)
        return y + x

    def through_a_third_module(self, x):
        y = self.side(x)
        bump_through(x)
        return y + x

    def through_a_third_module_a_view(self, x):
        y = self.side(x)
        bump_through_module(x)
        return y + x

    def method_of_an_attribute(self, x):
        y = self.side(x)
        self.cache.update(x)
        return y + x

    def method_of_a_local_class(self, x):
        y = self.side(x)
        self.local_cache.update(x)
        return y + x

    def third_party_writes(self, x):
        y = self.side(x)
        ext_bump(x)
        return y + x

    def torch_function_writes(self, x):
        y = self.side(x)
        torch.relu_(x)
        return y + x

    def written_by_the_first_operand(self, x):
        y = self.side(x)
        z = bumped(x) * x
        return y + z

    def written_on_the_side_stream(self, x):
        y = self.side_bumps(x)
        z = x * 3
        return y + z

    def written_after_a_read_on_one_stream(self, x):
        y = self.side(x)
        z = self.side_bumps(x)
        h = torch.ones_like(y) * 5
        return y + z + h

    def metadata_to_a_factory(self, x):
        y = self.side(x)
        z = torch.ones(x.shape[0], x.shape[1], dtype=x.dtype) * 3
        return y + z

    def absolute_reads(self, x):
        y = self.side(x)
        z = total(x) * x
        return y + z

    def through_a_third_module_reads(self, x):
        y = self.side(x)
        z = total_through(x) * x
        return y + z

    def method_of_an_attribute_reads(self, x):
        y = self.side(x)
        z = self.cache.peek(x) * x
        return y + z
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

WRITERS = [
    "absolute_writes",
    "absolute_module_writes",
    "through_a_third_module",
    "through_a_third_module_a_view",
    "method_of_an_attribute",
    "method_of_a_local_class",
    "third_party_writes",
    "torch_function_writes",
    "written_by_the_first_operand",
]
SIDE_WRITERS = ["written_on_the_side_stream", "written_after_a_read_on_one_stream"]  # the side call writes
READERS = [
    "absolute_reads",
    "through_a_third_module_reads",
    "method_of_an_attribute_reads",
    "metadata_to_a_factory",
]

_COUNT = itertools.count()


def _generated(tmp_path: Path, target: str, *, alone: bool) -> tuple[str, str]:
    """(the generated package's name, the code of its ``model.py``) under ``tmp_path / "out"``; the package and
    the library outside the run have names of their own, so that every test imports fresh modules."""
    number = next(_COUNT)
    name, ext = f"absw_{target}_{number}", f"absw_extlib_{number}"
    folder = tmp_path / "out" / name
    folder.mkdir(parents=True)
    (tmp_path / "out" / f"{ext}.py").write_text(EXTLIB, encoding="utf-8")
    sources = {"__init__.py": INIT, "deep.py": DEEP, "helpers.py": HELPERS, "model.py": MODEL}
    for file, source in sources.items():
        (folder / file).write_text(source.replace("PKG", name).replace("EXT", ext), encoding="utf-8")
    files = read_sources((str(folder / f), str(folder)) for f in ("deep.py", "helpers.py", "model.py"))
    codes = {}
    for group in [[f] for f in files] if alone else [files]:
        for result in run(group, target=target, jobs=1):
            assert not result.has_errors and result.code is not None, result.internal_error
            codes[Path(result.file.path).name] = result.code
    (folder / "model.py").write_text(codes["model.py"], encoding="utf-8")
    return name, codes["model.py"]


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("method", WRITERS)
def test_a_write_the_caller_reaches_elsewhere_joins_first(tmp_path: Path, method: str, alone: bool) -> None:
    """Joined right where the helper writes: the call overlaps nothing there and stays on the caller's stream."""
    assert "runtime." not in method_source(_generated(tmp_path, "portable", alone=alone)[1], method)


@pytest.mark.parametrize(
    ("method", "helper"),
    [
        ("absolute_reads", "total(x)"),
        ("through_a_third_module_reads", "total_through(x)"),
        ("method_of_an_attribute_reads", "self.cache.peek(x)"),
        ("metadata_to_a_factory", "torch.ones(x.shape[0]"),
    ],
)
def test_a_reader_of_a_module_the_run_holds_keeps_the_overlap(tmp_path: Path, method: str, helper: str) -> None:
    """One fork and one join, the join after the helper: it runs beside the side stream."""
    body = method_source(_generated(tmp_path, "portable", alone=False)[1], method)
    assert body.count("runtime.record(") == 2 and body.count("runtime.wait(") == 2
    assert body.rindex("runtime.wait(") > body.index(helper)


@pytest.mark.parametrize("alone", [False, True])
def test_a_side_call_writing_through_a_helper_is_joined_before_the_caller_reads(tmp_path: Path, alone: bool) -> None:
    """``side_bumps``'s body writes ``x`` through ``helpers.bump``: the index reads the callee's module alone, so
    the site learns it from the run (``caller_sites.py``); ``x * 3`` then waits (here: the call stays on the
    caller's stream, joined by the very next statement). Before, ``x * 3`` read ``x`` while the side stream wrote
    it."""
    body = method_source(_generated(tmp_path, "portable", alone=alone)[1], "written_on_the_side_stream")
    joins = [line for line in body.splitlines() if "runtime.wait(" in line and '.join")' in line]
    assert all(body.index(line) < body.index("z = x * 3") for line in joins)


def test_a_write_after_a_read_on_one_stream_waits_for_nothing(tmp_path: Path) -> None:
    """``side_bumps`` writes ``x`` that ``side`` read before it, on the same stream: the stream orders them, so the
    caller's stream does not wait between the two calls (it would cost a join and the overlap)."""
    body = method_source(_generated(tmp_path, "portable", alone=False)[1], "written_after_a_read_on_one_stream")
    between = body[body.index("y = self.side(x)") : body.index("z = self.side_bumps(x)")]
    assert "runtime.wait(" not in between and body.count("runtime.wait(") == 3


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    if method == "through_a_third_module_a_view":
        bumped = x.clone()
        bumped[0] += 1
        return x * 2 + bumped
    if method == "torch_function_writes":
        return x * 2 + x.relu()
    if method == "written_after_a_read_on_one_stream":
        return x * 2 + (x + 1) * 2 + 5
    if method == "written_on_the_side_stream":
        return (x + 1) * 2 + (x + 1) * 3
    if method == "written_by_the_first_operand":
        return x * 2 + (x + 1) * (x + 1)
    if method in WRITERS:
        return x * 2 + (x + 1)
    if method == "metadata_to_a_factory":
        return x * 2 + 3
    return x * 2 + x.sum() * x


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", WRITERS + SIDE_WRITERS + READERS)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    name, _ = _generated(tmp_path, target, alone=alone)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, _want(method, x))


TOP_MODEL = """\
import torch
from torch import nn
from npudsl import on_stream
from HELPERS import bump, total


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def sibling_writes(self, x):
        y = self.side(x)
        bump(x)
        return y + x

    def sibling_reads(self, x):
        y = self.side(x)
        z = total(x) * x
        return y + z
"""
TOP_MODEL += caller_source() + "\n\ndef build(method):\n    return Caller(method)\n"


def _top_level(tmp_path: Path, *, alone: bool) -> tuple[str, str]:
    """A top-level module (no package) importing its sibling file by absolute name: (its name, its code)."""
    number = next(_COUNT)
    name, helpers = f"absw_top_{number}", f"absw_top_helpers_{number}"
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / f"{helpers}.py").write_text(DEEP, encoding="utf-8")
    (folder / f"{name}.py").write_text(TOP_MODEL.replace("HELPERS", helpers), encoding="utf-8")
    paths = [f"{name}.py"] if alone else [f"{name}.py", f"{helpers}.py"]
    results = run(read_sources((str(folder / p), str(folder)) for p in paths), target="portable", jobs=1)
    code = next(r.code for r in results if r.file.path.endswith(f"{name}.py"))
    assert code is not None
    (folder / f"{name}.py").write_text(code, encoding="utf-8")
    return name, code


@pytest.mark.parametrize("alone", [False, True])
def test_a_top_level_module_reads_its_sibling(tmp_path: Path, alone: bool) -> None:
    """``from top_helpers import bump`` names a file of the run: read there, it writes ``x`` (joined first) and
    ``total`` keeps the overlap; transformed alone, the same file is read from disk beside it, for its facts
    (``codegen/driver/sibling_files.py``), with the same answers."""
    name, code = _top_level(tmp_path, alone=alone)
    assert "runtime." not in method_source(code, "sibling_writes")
    assert method_source(code, "sibling_reads").count("runtime.wait(") == 2
    x = torch.randn(2, 3)
    for method, want in (("sibling_writes", x * 2 + (x + 1)), ("sibling_reads", x * 2 + x.sum() * x)):
        got = run_generated(name, tmp_path / "out", "portable", lambda: (x.clone(),), method=method)
        torch.testing.assert_close(got, want)


CYCLE = {
    "__init__.py": "",
    "ping.py": "from . import pong\n\n\ndef ping(t, n):\n    return pong.pong(t, n - 1) if n else t.sum()\n",
    "pong.py": "from .ping import ping\n\n\ndef pong(t, n):\n    return ping(t, n)\n",
    "model.py": """\
from torch import nn
from npudsl import on_stream

from .ping import ping


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def through_a_cycle(self, x):
        y = self.side(x)
        z = ping(x, 3) * x
        return y + z
""",
}


def test_a_cycle_of_modules_is_read_once(tmp_path: Path) -> None:
    """``ping`` and ``pong`` call each other across two modules: read once each, they write nothing, and the
    reader keeps the overlap (the walk ends)."""
    folder = tmp_path / "cycle"
    folder.mkdir()
    for file, source in CYCLE.items():
        (folder / file).write_text(source, encoding="utf-8")
    files = read_sources((str(folder / f), str(folder)) for f in ("ping.py", "pong.py", "model.py"))
    code = next(r.code for r in run(files, target="portable", jobs=1) if r.file.path.endswith("model.py"))
    body = method_source(code or "", "through_a_cycle")
    assert body.rindex("runtime.wait(") > body.index("ping(x, 3)")
