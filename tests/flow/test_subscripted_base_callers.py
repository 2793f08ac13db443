"""A file that reaches a decorated submodule through a subscripted base (``class Top(weights.Weights[int])``) is a
caller file the run indexes, as one naming its base plainly is (``codegen/driver/subclass_callers.py``), and the
call there is planned: the base's class is followed through the subscript and the import's attribute
(``codegen/index/class_chain.py``). Before, the text search read ``Weights[int]`` as the base's name, the file was
not indexed and ``self.indexer(x)`` ran on the caller's stream, overlapping nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

INDEXER = """\
from torch import nn
from npudsl import on_stream


@on_stream("side")
class Indexer(nn.Module):
    def forward(self, x):
        return x * 2
"""

WEIGHTS = """\
from typing import Generic, TypeVar

from torch import nn

from .indexer import Indexer

T = TypeVar("T")


class Weights(nn.Module, Generic[T]):
    def __init__(self):
        super().__init__()
        self.indexer = Indexer()
"""

TOP = """\
from torch import nn

from . import weights


class Top(weights.Weights[int]):
    def forward(self, x):
        y = self.indexer(x)
        z = x * 5
        return y + z
""" + caller_source("Top")

INIT = """\
from . import top


def build(method):
    return top.Caller(method)
"""

FILES = {"__init__.py": INIT, "indexer.py": INDEXER, "weights.py": WEIGHTS, "top.py": TOP}


def _entry(tmp_path: Path) -> Entry:
    folder = tmp_path / "pkg_subscripted_base"
    folder.mkdir(exist_ok=True)
    for name, source in FILES.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="subscripted_base", package="pkg_subscripted_base", path=folder, idioms=(), upstream=(), needs=())


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_the_call_is_planned_and_race_free(tmp_path: Path, target: str) -> None:
    (tmp_path / "out").mkdir()
    name, codes = generated_package(_entry(tmp_path), target, tmp_path / "out")
    body = method_source(codes["top.py"], "forward")
    assert body.index("y = self.indexer(x)") < body.index("z = x * 5") < body.rindex("wait")
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method="forward")
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)
