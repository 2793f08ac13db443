"""A torch layer that a base class in another file assigns is read as its class's ``forward`` reads
(``torch_layer_reads.submodule_layer``).

``class Model(Weights)`` with ``from .weights import Weights``, whose ``__init__`` makes ``self.proj =
nn.Linear(...)`` and ``self.drop = nn.Dropout(...)``: ``_linear(h)`` forks ``side`` reading ``x``, and its only
caller ``by_linear`` hands ``h`` to ``self.proj(h)`` after the call, on every path. ``nn.Linear`` runs ``F.linear``
on its input, so the caller's read keeps ``h`` alive past the prolog's join and ``_linear`` needs no keep
(``held_params.py``), as vllm-ascend's DeepSeek-V4 indexer hands ``hidden_states`` to ``self.weights_proj``, an
``nn.Linear`` that ``IndexerWeights`` in ``weights.py`` assigns. Before, only the submodules of the caller's own
module were looked up: the ``nn.Linear`` of the base was read as nothing, and ``_linear`` kept ``x`` (one
``record_stream`` too many). ``nn.Dropout`` hands its input to ``F.dropout`` (in eval: its input back, no kernel),
so ``_dropout`` keeps ``x``. A file transformed alone reads ``weights.py`` from disk, as together; where neither the
run nor the disk holds it, the base may assign anything and ``_linear`` keeps ``x``. Every case runs race-checked and
exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source
from written_package import written_package

WEIGHTS = """\
import torch
from torch import nn


class Weights(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3, bias=False)
        self.drop = nn.Dropout(0.0)
        with torch.no_grad():
            self.proj.weight.fill_(0.5)
"""

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from .weights import Weights


class Model(Weights):
    @on_stream("side")
    def side(self, h):
        return h * 2

    def _linear(self, x: torch.Tensor) -> torch.Tensor:
        y = self.side(x)
        z = x + 1
        w = z * 3
        return y + w

    def _dropout(self, x: torch.Tensor) -> torch.Tensor:
        y = self.side(x)
        z = x + 1
        w = z * 3
        return y + w

    def by_linear(self, x):
        h = x * 1
        out = self._linear(h)
        return out * 2 + self.proj(h)

    def by_dropout(self, x):
        h = x * 1
        out = self._dropout(h)
        return out * 2 + self.drop(h)
""" + caller_source()

FILES = {"weights.py": WEIGHTS, "model.py": MODEL}
KEEP = 'runtime.record_stream(x, "side")'


def _model(tmp_path: Path, target: str = "portable", *, alone: bool = False) -> tuple[str, str]:
    name, codes = written_package(tmp_path, "pkg_inherited_layer_reads", target, FILES, alone=alone)
    return name, codes["model.py"]


def test_a_base_s_linear_read_after_the_call_needs_no_keep(tmp_path: Path) -> None:
    source = method_source(_model(tmp_path)[1], "_linear")
    assert "runtime.stream" in source and "record_stream" not in source


def test_a_base_s_dropout_reads_nothing_so_the_keep_stays(tmp_path: Path) -> None:
    assert KEEP in method_source(_model(tmp_path)[1], "_dropout")


def test_alone_the_base_is_read_from_disk_as_together(tmp_path: Path) -> None:
    source = method_source(_model(tmp_path, alone=True)[1], "_linear")
    assert "runtime.stream" in source and "record_stream" not in source


def test_a_base_neither_the_run_nor_the_disk_holds_may_assign_anything(tmp_path: Path) -> None:
    _, codes = written_package(tmp_path, "pkg_unheld_layer_base", "portable", {"model.py": MODEL})
    source = method_source(codes["model.py"], "_linear")
    assert "runtime.stream" in source and KEEP in source


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    out = (x * 2 + (x + 1) * 3) * 2
    return out + (0.5 * x.sum(dim=-1, keepdim=True).expand_as(x) if method == "by_linear" else x)


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", ["by_linear", "by_dropout"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    name, _ = _model(tmp_path, target, alone=alone)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, _want(method, x))
