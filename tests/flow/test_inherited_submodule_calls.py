"""A decorated submodule that a base class in another file assigns is a call site the run sees: the call is planned
(forked onto its stream, joined where its result is read), race-free and exact, transformed together; each file
transformed alone leaves it on its caller's stream (safe, no overlap).

``class Model(Weights)`` with ``from .weights import Weights``, whose ``__init__`` makes ``self.indexer = Indexer()``
(``Indexer`` from ``indexer.py``, which ``model.py`` does not import; its ``forward`` and ``score`` on stream
``"side"``): ``y = self.indexer(x)`` or ``y = self.indexer.score(x)``, then work of the caller's own. Before, the
resolver read the submodules of same-module bases only, so neither call was anybody's: both ran on the caller's
stream and ``npudsl check`` said NPD502 (no visible call site) of ``Indexer.forward`` and ``Indexer.score``. A base of
a base (``Middle(Weights)`` in ``middle.py``) likewise, and ``m.indexer(x)`` for a parameter annotated ``Model``.
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
from torch import nn
from npudsl import on_stream


class Indexer(nn.Module):
    @on_stream("side")
    def forward(self, x):
        return x * 2

    @on_stream("side")
    def score(self, x):
        return x * 3
"""

WEIGHTS = """\
from torch import nn

from .indexer import Indexer


class Weights(nn.Module):
    def __init__(self):
        super().__init__()
        self.indexer = Indexer()
"""

MIDDLE = """\
from .weights import Weights


class Middle(Weights):
    pass
"""

MODEL = (
    """\
import torch
from torch import nn
from npudsl import on_stream

from .middle import Middle
from .weights import Weights


def through_annotation(m: "Model", x):
    y = m.indexer(x)
    z = x * 5
    return y + z


class Model(Weights):
    @on_stream("gate")
    def gate(self, x):
        return x + 1

    def base_submodule(self, x):
        y = self.indexer(x)
        z = x * 5
        return y + z

    def base_submodule_method(self, x):
        y = self.indexer.score(x)
        z = x * 5
        return y + z

    def annotated_owner(self, x):
        return through_annotation(self, x)


class Deeper(Middle):
    def base_of_base_submodule(self, x):
        y = self.indexer(x)
        z = x * 5
        return y + z
"""
    + caller_source()
    + caller_source("Deeper").replace("class Caller", "class DeeperCaller")
)

INIT = """\
from . import model


def build(method):
    return (model.DeeperCaller if method.startswith("base_of_base") else model.Caller)(method)
"""

FILES = {"__init__.py": INIT, "indexer.py": INDEXER, "weights.py": WEIGHTS, "middle.py": MIDDLE, "model.py": MODEL}
CALLERS = {  # the method a case calls -> the function holding the submodule's call
    "base_submodule": "base_submodule",
    "base_submodule_method": "base_submodule_method",
    "base_of_base_submodule": "base_of_base_submodule",
    "annotated_owner": "through_annotation",
}
SWITCH = {"portable": 'runtime.stream("side"', "aclgraph": 'npu_stream_switch("side"'}


def _entry(tmp_path: Path) -> Entry:
    folder = tmp_path / "pkg_inherited_calls"
    folder.mkdir(exist_ok=True)
    for name, source in FILES.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="inherited_calls", package="pkg_inherited_calls", path=folder, idioms=(), upstream=(), needs=())


def _generated(tmp_path: Path, target: str, *, alone: bool) -> tuple[str, str]:
    (tmp_path / "out").mkdir(exist_ok=True)
    name, codes = generated_package(_entry(tmp_path), target, tmp_path / "out", alone=alone)
    return name, codes["model.py"]


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", CALLERS)
def test_the_call_is_planned_together(tmp_path: Path, method: str, target: str) -> None:
    """Switched onto ``"side"``, with the caller's own work (``z = x * 5``) between the call and its join."""
    body = method_source(_generated(tmp_path, target, alone=False)[1], CALLERS[method])
    call = body.index("y = m.indexer(x)" if method == "annotated_owner" else "y = self.indexer")
    assert body.index(SWITCH[target]) < call < body.index("z = x * 5")
    assert "wait" in body[body.index("z = x * 5") :].split("return y + z")[0]


@pytest.mark.parametrize("method", CALLERS)
def test_each_file_alone_leaves_the_call_on_its_callers_stream(tmp_path: Path, method: str) -> None:
    """``model.py`` alone does not see ``weights.py``: the base may assign anything, so the call is nobody's."""
    body = method_source(_generated(tmp_path, "portable", alone=True)[1], CALLERS[method])
    assert "runtime." not in body


def test_check_sees_the_call_sites(tmp_path: Path) -> None:
    """No NPD502 for the indexer's stream methods: each has a call site the run sees."""
    folder = _entry(tmp_path).path
    files = read_sources((str(folder / name), str(folder)) for name in FILES if name != "__init__.py")
    found = {(d.code, d.message.split(" ")[0]) for r in run(files, target="portable", jobs=1) for d in r.diagnostics}
    assert ("NPD502", "Model.gate") in found  # called nowhere: the message names the function so
    assert ("NPD502", "Indexer.forward") not in found
    assert ("NPD502", "Indexer.score") not in found


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", CALLERS)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    """The same math as on one stream: ``x * 2`` (``x * 3`` for ``score``) plus ``x * 5``."""
    name, _ = _generated(tmp_path, target, alone=alone)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, x * (3 if method == "base_submodule_method" else 2) + x * 5, rtol=0, atol=0)
