"""A file that reaches a decorated submodule only through its base class is a caller file the run indexes.

``top.py`` holds ``class Top(Weights)`` and calls ``self.indexer(x)``; ``weights.py``'s ``Weights.__init__`` makes
``self.indexer = Indexer()`` of a decorated class of ``indexer.py``. ``top.py`` names neither npudsl nor ``Indexer``,
so the index's text search for callers (the names the stream functions are defined under) skipped it: the call was
nobody's, ran on the caller's stream and ``npudsl check`` said NPD502 of ``Indexer.forward``. Now the files that
derive a class from one holding a decorated submodule are indexed too (``codegen/driver/subclass_callers.py``), and
only those: a file that merely imports ``Weights`` is not read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

from codegen.driver.indexing import index_run
from codegen.driver.run import read_sources, run

INDEXER = """\
from torch import nn
from npudsl import on_stream


@on_stream("side")
class Indexer(nn.Module):
    def forward(self, x):
        return x * 2
"""

WEIGHTS = """\
from torch import nn

from .indexer import Indexer


class Weights(nn.Module):
    def __init__(self):
        super().__init__()
        self.indexer = Indexer()
"""

TOP = """\
from torch import nn

from .weights import Weights


class Top(Weights):
    def forward(self, x):
        y = self.indexer(x)
        z = x * 5
        return y + z
""" + caller_source("Top")

MENTIONS = """\
from .weights import Weights


def is_weights(obj):
    return isinstance(obj, Weights)
"""

INIT = """\
from . import top


def build(method):
    return top.Caller(method)
"""

FILES = {"__init__.py": INIT, "indexer.py": INDEXER, "weights.py": WEIGHTS, "top.py": TOP, "mentions.py": MENTIONS}
SWITCH = {"portable": 'runtime.stream("side"', "aclgraph": 'npu_stream_switch("side"'}


def _entry(tmp_path: Path) -> Entry:
    folder = tmp_path / "pkg_subclass_callers"
    folder.mkdir(exist_ok=True)
    for name, source in FILES.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="subclass_callers", package="pkg_subclass_callers", path=folder, idioms=(), upstream=(), needs=())


def _files(tmp_path: Path) -> list:
    folder = _entry(tmp_path).path
    return read_sources((str(folder / name), str(folder)) for name in FILES if name != "__init__.py")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_the_subclass_call_is_planned(tmp_path: Path, target: str) -> None:
    """Switched onto ``"side"``, the caller's own work (``z = x * 5``) between the call and its join."""
    (tmp_path / "out").mkdir()
    _, codes = generated_package(_entry(tmp_path), target, tmp_path / "out")
    body = method_source(codes["top.py"], "forward")
    assert body.index(SWITCH[target]) < body.index("y = self.indexer(x)") < body.index("z = x * 5")
    assert "wait" in body[body.index("z = x * 5") :].split("return y + z")[0]


def test_check_sees_the_call_site(tmp_path: Path) -> None:
    results = run(_files(tmp_path), target="portable", jobs=1)
    found = {(d.code, d.message.split(" ")[0]) for r in results for d in r.diagnostics}
    assert ("NPD502", "Indexer.forward") not in found


def test_a_file_that_only_mentions_the_holder_is_not_indexed(tmp_path: Path) -> None:
    indexed = set(index_run(_files(tmp_path)).imports)
    assert {key.rpartition(".")[2] for key in indexed} == {"indexer", "weights", "top"}


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_race_free_and_exact(tmp_path: Path, target: str) -> None:
    (tmp_path / "out").mkdir()
    name, _ = generated_package(_entry(tmp_path), target, tmp_path / "out")
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method="forward")
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)
