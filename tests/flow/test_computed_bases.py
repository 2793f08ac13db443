"""A base class read through an import's attribute (``weights.Weights``), a subscript (``weights.Weights[int]``),
or computed by the source (``make_base()``, ``Base = make_base()``) is followed or taken as unknown
(``codegen/index/class_chain.py``: ``bases_of``).

``Weights.__init__`` makes ``self.norm = Bump()``, whose ``forward`` adds 1 to its input in place. ``self.norm(x)``
in ``Model`` must wait for the side call still reading ``x``. Before, only a base named plainly (``class
Model(Weights)``) was followed: through an attribute, a subscript or a call the base was skipped, ``self.norm`` was
no attribute any base assigns and no base was unknown, so the call was taken to write nothing, together and alone,
and the race checker found the side call's read and the write in place. Now an attribute chain or a subscript is
followed to the class where the run holds it, and a base the run cannot name (a call, a name assigned otherwise, a
module of the package the run lacks) makes the object's attributes unknown: the call writes every argument.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

WEIGHTS = """\
from typing import Generic, TypeVar

from torch import nn

T = TypeVar("T")


class Bump(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x


class Weights(nn.Module, Generic[T]):
    def __init__(self):
        super().__init__()
        self.norm = Bump()


def make_base():
    return Weights
"""

BASES = {
    "attribute": ("from . import weights", "", "weights.Weights"),
    "subscript": ("from . import weights", "", "weights.Weights[int]"),
    "call": ("from .weights import make_base", "", "make_base()"),
    "assigned": ("from .weights import make_base", "Base = make_base()\n", "Base"),
}

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream
{imports}

{assigned}

class Model({base}):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def forward(self, x):
        y = self.side(x)
        z = torch.ones(x.shape) * 5
        self.norm(x)
        return y + z + x
"""

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""
_COUNT = itertools.count()


def _entry(tmp_path: Path, variant: str) -> Entry:
    package = f"pkg_bases_{variant}_{next(_COUNT)}"
    imports, assigned, base = BASES[variant]
    folder = tmp_path / package
    folder.mkdir()
    model = MODEL.format(imports=imports, assigned=assigned, base=base) + caller_source()
    for name, source in {"__init__.py": INIT, "weights.py": WEIGHTS, "model.py": model}.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name=package, package=package, path=folder, idioms=(), upstream=(), needs=())


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
@pytest.mark.parametrize("variant", sorted(BASES))
def test_the_write_through_the_base_submodule_waits(tmp_path: Path, variant: str, alone: bool) -> None:
    (tmp_path / "out").mkdir()
    _, codes = generated_package(_entry(tmp_path, variant), "portable", tmp_path / "out", alone=alone)
    body = method_source(codes["model.py"], "forward")
    assert (
        body.index("runtime.stream(") < body.index("z = ") < body.rindex("runtime.wait(") < body.index("self.norm(x)")
    )


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("variant", sorted(BASES))
def test_race_free_and_exact(tmp_path: Path, variant: str, target: str, alone: bool) -> None:
    (tmp_path / "out").mkdir()
    name, _ = generated_package(_entry(tmp_path, variant), target, tmp_path / "out", alone=alone)
    x = torch.randn(3, 4)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method="forward")
    torch.testing.assert_close(got, x * 2 + 5 + (x + 1), rtol=0, atol=0)
