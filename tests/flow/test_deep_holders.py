"""Calls through submodules of submodules, at any depth: what they reach and what they write.

``top.py``'s ``Top.__init__`` makes ``self.mid = Mid()``, ``mid.py``'s ``Mid`` makes ``self.block = Block()``, and
``block.py``'s ``Block`` makes ``self.indexer = Indexer()`` of a decorated class (``forward`` on ``"side"``, ``prep``
on ``"side2"``) and ``self.bump = Bump()``, whose ``forward`` writes its input in place. On main:

- ``self.mid.block.indexer(x)`` (a holder of a holder of a holder) and ``self.block.indexer.prep(x)`` (a method of a
  held submodule) were nobody's: they ran on the caller's stream, overlapped nothing, and ``npudsl check`` said NPD502;
  ``top.py``, naming only ``Mid``, was not even indexed. Now each attribute is read among the submodules of the class
  the one before holds (``codegen/lower/flow/held_submodules.py``), and a file holding a holder's holder is indexed
  (``codegen/driver/subclass_callers.holding_holders``, a round at a time).
- ``self.block.bump(x)`` and ``self.mid.block.bump(x)`` after ``r = self.side(x)`` were read as a method ``bump`` of
  ``Block`` (none) or as nothing: taken to write nothing, so the in-place add ran while the side stream still read
  ``x`` (race checker: read on ``side3``, written on ``default``, no wait between). Now the chain is followed
  through the submodules to ``Bump.forward`` (``imported_writes.ModuleFunctions``), which writes ``x``: joined first.

Every target runs race-checked and exact.
"""

from __future__ import annotations

import re
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

    @on_stream("side2")
    def prep(self, x):
        return x * 3
"""

BLOCK = """\
from torch import nn

from .indexer import Indexer


class Bump(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.indexer = Indexer()
        self.bump = Bump()
"""

MID = """\
from torch import nn

from .block import Block


class Mid(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
"""

TOP = """\
from torch import nn

from .mid import Mid


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = Mid()

    def deep(self, x):
        y = self.mid.block.indexer(x)
        z = x * 5
        seen = self.mid.block.indexer.seen * 1
        x.add_(1)
        return y + z + x + seen

    def method(self, x):
        y = self.mid.block.indexer.prep(x)
        z = x * 5
        x.add_(1)
        return y + z + x
""" + caller_source("Top")

RACER = """\
from torch import nn
from npudsl import on_stream

from .block import Block
from .mid import Mid


class Racer(nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = Mid()
        self.block = Block()

    @on_stream("side3")
    def side(self, x):
        return x * 7

    def bumped(self, x):
        r = self.side(x)
        z = x * 5
        self.block.bump(x)
        return r + z + x

    def bumped_deep(self, x):
        r = self.side(x)
        z = x * 5
        self.mid.block.bump(x)
        return r + z + x

    def held_method(self, x):
        y = self.block.indexer.prep(x)
        z = x * 5
        x.add_(1)
        return y + z + x
""" + caller_source("Racer")

MENTIONS = """\
from .mid import Mid


def is_mid(obj):
    return isinstance(obj, Mid)
"""

INIT = """\
from . import racer, top


def build(method):
    return (top if method in ("deep", "method") else racer).Caller(method)
"""

FILES = {"__init__.py": INIT, "indexer.py": INDEXER, "block.py": BLOCK, "mid.py": MID, "top.py": TOP}
FILES |= {"racer.py": RACER, "mentions.py": MENTIONS}
TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")
SPOT = {"deep": ("top.py", 'stream("side"', "y = self.mid.block.indexer(x)")}
SPOT |= {"method": ("top.py", 'stream("side2"', "y = self.mid.block.indexer.prep(x)")}
SPOT |= {"held_method": ("racer.py", 'stream("side2"', "y = self.block.indexer.prep(x)")}
WRITES = {"bumped": "self.block.bump(x)", "bumped_deep": "self.mid.block.bump(x)"}


def _entry(tmp_path: Path) -> Entry:
    folder = tmp_path / "pkg_deep_holders"
    folder.mkdir(exist_ok=True)
    for name, source in FILES.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="deep_holders", package="pkg_deep_holders", path=folder, idioms=(), upstream=(), needs=())


def _files(tmp_path: Path) -> list:
    folder = _entry(tmp_path).path
    return read_sources((str(folder / name), str(folder)) for name in FILES if name != "__init__.py")


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("portable")
    (root / "out").mkdir()
    return generated_package(_entry(root), "portable", root / "out")[1]


@pytest.mark.parametrize("method", sorted(SPOT))
def test_the_call_through_the_holders_is_planned(portable: dict[str, str], method: str) -> None:
    """Switched onto its stream, the caller's own work (``z = x * 5``) between the call and its join, which comes
    before the caller's write of what the call reads."""
    file, switch, call = SPOT[method]
    body = method_source(portable[file], method)
    assert body.index(switch) < body.index(call) < body.index("z = x * 5")
    assert "wait" in body[body.index("z = x * 5") :].split("x.add_(1)")[0]


@pytest.mark.parametrize("method", sorted(WRITES))
def test_the_write_through_the_holders_waits(portable: dict[str, str], method: str) -> None:
    body = method_source(portable["racer.py"], method)
    join = re.search(r'wait\("[\w.]*Racer\.side\.join"\)', body).start()  # type: ignore[union-attr]
    assert body.index("z = x * 5") < join < body.index(WRITES[method])


def test_check_sees_the_call_sites(tmp_path: Path) -> None:
    results = run(_files(tmp_path), target="portable", jobs=1)
    found = {(d.code, d.message.split(" ")[0]) for r in results for d in r.diagnostics}
    assert not {("NPD502", "Indexer.forward"), ("NPD502", "Indexer.prep")} & found


def test_the_file_holding_the_holders_is_indexed_and_no_other(tmp_path: Path) -> None:
    indexed = set(index_run(_files(tmp_path)).imports)
    assert {key.rpartition(".")[2] for key in indexed} == {"indexer", "block", "mid", "top", "racer"}


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    if method == "deep":
        return x * 2 + x * 5 + (x + 1) + x
    if method in ("method", "held_method"):
        return x * 3 + x * 5 + (x + 1)
    return x * 7 + x * 5 + (x + 1)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", [*sorted(SPOT), *sorted(WRITES)])
def test_race_free_and_exact(tmp_path: Path, target: str, method: str) -> None:
    (tmp_path / "out").mkdir()
    name, _ = generated_package(_entry(tmp_path), target, tmp_path / "out")
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), eager_first=native, method=method)
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)
