"""A call of a decorated submodule through a submodule of the caller: ``self.block.indexer(x)``.

``top.py``'s ``Top.__init__`` makes ``self.block = Block()``; ``block.py``'s ``Block.__init__`` makes ``self.indexer
= Indexer()`` of a decorated class of ``indexer.py``. On main the call was nobody's: the resolver read
``self.block.indexer`` as a method ``indexer`` of ``Block`` (there is none), and ``top.py``, naming neither npudsl nor
``Indexer``, was not even indexed; the call ran on the caller's stream, overlapped nothing, and ``npudsl check`` said
NPD502 of ``Indexer.forward``. Now ``self.block``'s class is read and ``indexer`` among its submodules
(``codegen/lower/flow/held_submodules.py``), and a file holding a holder is indexed
(``codegen/driver/subclass_callers.py``); a file that only mentions ``Block`` is not. The caller's write of ``x``
after the call, and its read of the state the call writes (``self.block.indexer.seen``), wait for it; every target
runs race-checked and exact.
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
import torch
from torch import nn
from npudsl import on_stream


@on_stream("side")
class Indexer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(2, 3))

    def forward(self, x):
        self.seen.copy_(x)
        return x * 2
"""

BLOCK = """\
from torch import nn

from .indexer import Indexer


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.indexer = Indexer()
"""

TOP = """\
from torch import nn

from .block import Block


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        y = self.block.indexer(x)
        z = x * 5
        seen = self.block.indexer.seen * 1
        x.add_(1)
        return y + z + x + seen
""" + caller_source("Top")

MENTIONS = """\
from .block import Block


def is_block(obj):
    return isinstance(obj, Block)
"""

INIT = """\
from . import top


def build(method):
    return top.Caller(method)
"""

FILES = {"__init__.py": INIT, "indexer.py": INDEXER, "block.py": BLOCK, "top.py": TOP, "mentions.py": MENTIONS}
SWITCH = {"portable": 'runtime.stream("side"', "aclgraph": 'npu_stream_switch("side"'}
TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")


def _entry(tmp_path: Path) -> Entry:
    folder = tmp_path / "pkg_held_submodules"
    folder.mkdir(exist_ok=True)
    for name, source in FILES.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="held_submodules", package="pkg_held_submodules", path=folder, idioms=(), upstream=(), needs=())


def _files(tmp_path: Path) -> list:
    folder = _entry(tmp_path).path
    return read_sources((str(folder / name), str(folder)) for name in FILES if name != "__init__.py")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_the_call_through_the_holder_is_planned(tmp_path: Path, target: str) -> None:
    """Switched onto ``"side"``, the caller's own work (``z = x * 5``) between the call and its join, the read of
    the state it writes after the join."""
    (tmp_path / "out").mkdir()
    _, codes = generated_package(_entry(tmp_path), target, tmp_path / "out")
    body = method_source(codes["top.py"], "forward")
    assert body.index(SWITCH[target]) < body.index("y = self.block.indexer(x)") < body.index("z = x * 5")
    assert "wait" in body[body.index("z = x * 5") :].split("seen = self.block.indexer.seen")[0]


def test_check_sees_the_call_site(tmp_path: Path) -> None:
    results = run(_files(tmp_path), target="portable", jobs=1)
    found = {(d.code, d.message.split(" ")[0]) for r in results for d in r.diagnostics}
    assert ("NPD502", "Indexer.forward") not in found


def test_the_file_holding_the_holder_is_indexed_and_no_other(tmp_path: Path) -> None:
    indexed = set(index_run(_files(tmp_path)).imports)
    assert {key.rpartition(".")[2] for key in indexed} == {"indexer", "block", "top"}


@pytest.mark.parametrize("target", TARGETS)
def test_race_free_and_exact(tmp_path: Path, target: str) -> None:
    (tmp_path / "out").mkdir()
    name, _ = generated_package(_entry(tmp_path), target, tmp_path / "out")
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), eager_first=native, method="forward")
    torch.testing.assert_close(got, x * 2 + x * 5 + (x + 1) + x, rtol=0, atol=0)
