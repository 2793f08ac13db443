"""A method of an item whose class the run cannot read writes the whole list's state: items may be one object.

``self.layers[0].bump()`` with ``self.layers = nn.ModuleList([shared, shared])`` of a class from outside the run:
nothing the run reads says what ``bump`` writes, nor that the two items are distinct objects (a list built of calls
of a class the run reads, given no tensor, is: ``distinct_items.py``; an unread class may keep shared tensors or a
``__new__`` of its own). Narrowing the write to item 0 would let a side call reading ``self.layers[1].seen`` overlap
it, and here item 1 is item 0: the race checker reports the write. The call keeps writing ``self.layers.*``
(``unread_methods._item_writes``): the caller waits for the side call first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

MODEL = """\
import extlayers
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        shared = extlayers.Layer()
        self.layers = nn.ModuleList([shared, shared])

    @on_stream("side")
    def side(self, x):
        return x * self.layers[1].seen

    def bump_first(self, x):
        y = self.side(x)
        z = x * 5
        self.layers[0].bump()
        return y + z
""" + caller_source()

EXTLIB = """\
import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.full((3,), 2.0))

    def bump(self):
        self.seen.mul_(1.0)  # a write in place that leaves the value: the numbers do not depend on the call count
"""

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    folder = tmp_path / "pkg_unknown_items"
    folder.mkdir(exist_ok=True)
    (folder / "__init__.py").write_text(INIT, encoding="utf-8")
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    entry = Entry(name="unknown_items", package="pkg_unknown_items", path=folder, idioms=(), upstream=(), needs=())
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / "extlayers.py").write_text(EXTLIB, encoding="utf-8")  # outside the run: read by no transform
    name, codes = generated_package(entry, target, out)
    return name, codes["model.py"]


def test_the_item_call_waits(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "bump_first")
    before = body[: body.index("self.layers[0].bump()")]
    assert 'runtime.stream("side"' in before and 'runtime.wait("' in before.rpartition("z = x * 5")[2], body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_race_free_and_exact(tmp_path: Path, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method="bump_first")
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)
