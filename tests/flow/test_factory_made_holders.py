"""A holder made by a factory function of the run: ``self.block = make_block()``, then ``self.block.indexer(x)``.

``top.py``'s ``Top.__init__`` makes ``self.block = make_block()`` with ``def make_block() -> Block: return Block()``
in ``block.py``, and ``Block.__init__`` makes ``self.indexer = make_indexer()`` of a decorated class of ``indexer.py``
(``def make_indexer(): layer = Indexer(); layer.reset(); return layer``: a local bound once to the class's call). The
index records the names called, so ``self.block`` held ``make_block``, no class: the call was nobody's and ran on the
caller's stream (no overlap). Now ``held_submodules._held_class`` reads the factory as the class it makes
(``made_class_in.py``), as ``class_chain.forward_of`` does for ``self.sub(x)``: the call is forked onto ``"side"``,
joined before the caller's write of ``x`` and its read of the state the call writes, race-free and exact on every
target. ``top.py`` alone (``block.py`` neither in the run nor on disk) keeps the call on its caller's stream.
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

INDEXER = """\
import torch
from torch import nn
from npudsl import on_stream


@on_stream("side")
class Indexer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(2, 3))

    def reset(self):
        self.seen.zero_()

    def forward(self, x):
        self.seen.copy_(x)
        return x * 2


def make_indexer():
    layer = Indexer()
    layer.reset()
    return layer
"""

BLOCK = """\
from torch import nn

from .indexer import make_indexer


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.indexer = make_indexer()


def make_block() -> Block:
    return Block()
"""

TOP = """\
from torch import nn
from npudsl import on_stream

from .block import make_block


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = make_block()

    @on_stream("other")
    def other(self, x):
        return x + 1

    def forward(self, x):
        y = self.block.indexer(x)
        z = x * 5
        seen = self.block.indexer.seen * 1
        x.add_(1)
        return y + z + x + seen
""" + caller_source("Top")

INIT = """\
from . import top


def build(method):
    return top.Caller(method)
"""

FILES = {"__init__.py": INIT, "indexer.py": INDEXER, "block.py": BLOCK, "top.py": TOP}
SWITCH = {"portable": 'runtime.stream("side"', "aclgraph": 'npu_stream_switch("side"'}
TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")


def _entry(tmp_path: Path) -> Entry:
    folder = tmp_path / "pkg_factory_holders"
    folder.mkdir(exist_ok=True)
    for name, source in FILES.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="factory_holders", package="pkg_factory_holders", path=folder, idioms=(), upstream=(), needs=())


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_the_call_through_the_factory_made_holder_is_planned(tmp_path: Path, target: str) -> None:
    """Switched onto ``"side"``, the caller's own work (``z = x * 5``) between the call and its join, the read of
    the state it writes after the join (on main: no switch at all)."""
    (tmp_path / "out").mkdir()
    _, codes = generated_package(_entry(tmp_path), target, tmp_path / "out")
    body = method_source(codes["top.py"], "forward")
    assert body.index(SWITCH[target]) < body.index("y = self.block.indexer(x)") < body.index("z = x * 5")
    assert "wait" in body[body.index("z = x * 5") :].split("seen = self.block.indexer.seen")[0]


def test_without_the_holders_module_the_call_stays_on_its_callers_stream(tmp_path: Path) -> None:
    folder = _entry(tmp_path).path
    (folder / "block.py").unlink()
    files = read_sources((str(folder / n), str(folder)) for n in ("indexer.py", "top.py"))
    code = next(r.code for r in run(files, target="portable", jobs=1) if r.file.path.endswith("top.py"))
    assert code is not None
    assert 'runtime.stream("side"' not in method_source(code, "forward")


@pytest.mark.parametrize("target", TARGETS)
def test_race_free_and_exact(tmp_path: Path, target: str) -> None:
    (tmp_path / "out").mkdir()
    name, _ = generated_package(_entry(tmp_path), target, tmp_path / "out")
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), eager_first=native, method="forward")
    torch.testing.assert_close(got, x * 2 + x * 5 + (x + 1) + x, rtol=0, atol=0)
