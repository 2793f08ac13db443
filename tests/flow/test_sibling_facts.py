"""A file transformed alone reads the facts of its package's other files from disk, never transforms them.

``model.py`` alone, with ``class Model(Base)`` and ``from .base import Base``: before, the run did not hold
``base.py``, so ``Base``'s methods could write any of the object's state (``read_classes.py``), and
``self.bump()`` (which writes ``self.other`` only, as ``self.halve()`` does) joined a side call reading
``self.buf``: the overlap was lost. ``base.py`` is the file Python imports beside ``model.py``; it is now read for
its facts (``codegen/driver/sibling_files.py``): ``self.bump()`` keeps the overlap, ``self.update()`` (which
writes ``self.buf``) still waits. A sibling that is absent or does not parse answers nothing: the worst case
stays. A decorated sibling's stream functions stay its own: the run does not transform it, so its calls get no
fork.
"""

from __future__ import annotations

import shutil
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

from codegen.driver.run import read_sources, run

TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from .base import Base


class Model(Base):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), 2.0))
        self.register_buffer("other", torch.full((2, 3), 3.0))

    @on_stream("side")
    def side(self, x):
        return x * self.buf

    def keeps(self, x):
        y = self.side(x)
        self.bump()
        z = x * self.other
        self.halve()
        return y + z

    def waits(self, x):
        y = self.side(x)
        z = x * 5
        self.update()
        self.buf.div_(2)
        return y + z
""" + caller_source()

BASE = """\
from torch import nn


class Base(nn.Module):
    def bump(self):
        self.other.mul_(2)

    def halve(self):
        self.other.div_(2)

    def update(self):
        self.buf.mul_(2)
"""

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""


def _package(tmp_path: Path, base: str | bytes | None = BASE) -> Path:
    folder = tmp_path / "pkg_sibling_facts"
    folder.mkdir(exist_ok=True)
    (folder / "__init__.py").write_text(INIT, encoding="utf-8")
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    if isinstance(base, str):
        (folder / "base.py").write_text(base, encoding="utf-8")
    elif isinstance(base, bytes):
        (folder / "base.py").write_bytes(base)
    return folder


def _alone(folder: Path, target: str = "portable") -> str:
    """``model.py`` transformed in a run of its own."""
    (result,) = run(read_sources([(str(folder / "model.py"), str(folder))]), target=target, jobs=1)
    assert result.code is not None, [d.format() for d in result.diagnostics] or result.internal_error
    return result.code


def _overlaps(code: str, method: str, statement: str) -> bool:
    """The side call of ``method`` runs on its stream, and the caller first waits for it after ``statement``."""
    body = method_source(code, method)
    return (
        "runtime.stream(" in body
        and "runtime.wait(" not in body[body.index("y = self.side(x)") : body.index(statement)]
    )


def test_a_method_writing_other_state_keeps_the_overlap(tmp_path: Path) -> None:
    assert _overlaps(_alone(_package(tmp_path)), "keeps", "self.halve()")


def test_a_method_writing_what_the_side_call_reads_waits(tmp_path: Path) -> None:
    code = _alone(_package(tmp_path))
    assert "runtime.stream(" in method_source(code, "waits") and not _overlaps(code, "waits", "self.update()")


@pytest.mark.parametrize(
    "base",
    [None, "class Base(nn.Module:\n", b"# \xff\n" + BASE.encode()],
    ids=["absent", "unparsable", "not-utf8"],
)
def test_a_sibling_the_run_cannot_read_is_the_worst_case(tmp_path: Path, base: str | bytes | None) -> None:
    code = _alone(_package(tmp_path, base))
    assert not _overlaps(code, "keeps", "self.bump()")
    assert not _overlaps(code, "waits", "self.update()")


def test_a_compiled_extension_beside_the_sibling_is_not_read(tmp_path: Path) -> None:
    folder = _package(tmp_path)
    (folder / f"base{EXTENSION_SUFFIXES[0]}").write_bytes(b"")  # the import system takes it before base.py
    assert not _overlaps(_alone(folder), "keeps", "self.bump()")


def test_a_package_folder_comes_before_a_module_of_its_name(tmp_path: Path) -> None:
    folder = _package(tmp_path)
    (folder / "base").mkdir()
    (folder / "base" / "__init__.py").write_text(BASE.replace("self.other.mul_(2)", "self.buf.mul_(2)"), "utf-8")
    assert not _overlaps(_alone(folder), "keeps", "self.bump()")  # base/__init__.py's bump writes self.buf


def test_a_decorated_sibling_is_read_for_its_facts_not_its_streams(tmp_path: Path) -> None:
    decorated = "from npudsl import on_stream\n" + BASE.replace("    def bump", '    @on_stream("base")\n    def bump')
    code = _alone(_package(tmp_path, decorated))
    assert '"base"' not in code  # its stream is its own: the run does not transform base.py
    assert _overlaps(code, "keeps", "self.halve()")


def test_a_sibling_beside_a_file_in_no_package(tmp_path: Path) -> None:
    folder = _package(tmp_path)
    (folder / "__init__.py").unlink()
    model = folder / "model.py"
    model.write_text(MODEL.replace("from .base import Base", "from base import Base"), encoding="utf-8")
    assert _overlaps(_alone(folder), "keeps", "self.halve()")


def test_a_package_init_in_the_run_does_not_stand_for_its_submodule(tmp_path: Path) -> None:
    """``__init__.py`` and ``model.py`` in one run, ``base.py`` absent: ``.base`` is no name of the ``__init__``
    the run holds, so ``Base`` is unread (before, it was read there as a class that writes nothing)."""
    folder = _package(tmp_path, None)
    files = read_sources([(str(folder / "__init__.py"), str(folder)), (str(folder / "model.py"), str(folder))])
    (code,) = [r.code for r in run(files, target="portable", jobs=1) if r.file.path.endswith("model.py")]
    assert code is not None
    assert not _overlaps(code, "waits", "self.update()")


def _entry(folder: Path) -> Entry:
    return Entry(name="sibling_facts", package=folder.name, path=folder, idioms=(), upstream=(), needs=())


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["keeps", "waits"])
def test_race_free_and_exact_alone(tmp_path: Path, target: str, method: str) -> None:
    (tmp_path / "out").mkdir()
    name, _ = generated_package(_entry(_package(tmp_path)), target, tmp_path / "out", alone=True)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method, eager_first=native)
    want = x * 2 + x * 6 if method == "keeps" else x * 2 + x * 5
    torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge"])
def test_race_free_with_the_package_init_in_the_run(tmp_path: Path, target: str) -> None:
    """``__init__.py`` and ``model.py`` in one run, ``base.py`` on disk only: before, ``self.update()`` wrote
    ``self.buf`` while the side call still read it (the race checker names both lines)."""
    folder = _package(tmp_path)
    out = tmp_path / "out" / "pkg_with_init"
    shutil.copytree(folder, out)
    files = read_sources([(str(out / "__init__.py"), str(out)), (str(out / "model.py"), str(out))])
    for result in run(files, target=target, jobs=1):
        Path(result.file.path).write_text(result.code or result.file.source or "", encoding="utf-8")
    x = torch.randn(2, 3)
    got = run_generated(out.name, out.parent, target, lambda: (x.clone(),), method="waits")
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)


def test_the_command_line_reads_the_same_sibling(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from npudsl.cli import main

    folder = _package(tmp_path)
    assert main(["transform", str(folder / "model.py"), "--target", "portable"]) == 0
    assert capsys.readouterr().out.rstrip("\n") == _alone(folder).rstrip("\n")
