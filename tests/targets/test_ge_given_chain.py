"""GE: a chain of calls on one stream reading only what the function was given, or what the chain made, needs no fork
edge (``codegen/lower/flow/ge_given_chain.py``).

``Model(Weights)``, with ``Weights`` in another file assigning ``self.q_norm = Norm()`` and ``self.kv_w``: ``chained``
runs ``self.q_norm(x)`` on the caller's stream, then three calls on ``"side"`` one right after another (``_kv_quant(x)``
reading ``self.kv_w``,
``_kv_scale(kv)``, ``_kv_sum(kv, x)``), as vllm-ascend's DeepSeek-V4 MLA prolog quantizes, projects and scatters its
KV half. Before, the first call led a chain, so neither the given rule nor the own-stream rule freed it, and
``self.q_norm(x)`` counted as a method of the object that may change anything: a token (record, wait) per call.
Now: one switch, no edge. An edge stays where a later call of the chain reads what the function made
(``made_first``: ``_kv_sum(kv, h)``, ``h = x.sin()`` before the caller's other work), where a
method of the object ran first (``method_first``: it may change the state the chain reads), and where ``model.py``
is transformed alone with no ``weights.py`` beside it (the base class is unknown, so ``self.q_norm`` may be a
method); alone with ``weights.py`` on disk, the run reads the base's facts from it (``sibling_files.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

WEIGHTS = """\
import torch
from torch import nn


class Norm(nn.Module):
    def forward(self, x):
        return x * 0.5


class Weights(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_norm = Norm()
        self.kv_w = nn.Parameter(torch.full((3,), 3.0))
"""

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from .weights import Weights


class Model(Weights):
    @on_stream("side")
    def _kv_quant(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.kv_w

    @on_stream("side")
    def _kv_scale(self, kv: torch.Tensor) -> torch.Tensor:
        return kv + 1

    @on_stream("side")
    def _kv_sum(self, kv: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return kv + x

    def scaled(self, x: torch.Tensor) -> torch.Tensor:
        return x * 0.5

    def chained(self, x: torch.Tensor) -> torch.Tensor:
        q = self.q_norm(x)
        kv = self._kv_quant(x)
        kv = self._kv_scale(kv)
        s = self._kv_sum(kv, x)
        return q * 2 + s

    def made_first(self, x: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        q = self.q_norm(x)
        kv = self._kv_quant(x)
        kv = self._kv_scale(kv)
        s = self._kv_sum(kv, h)
        return q * 2 + s

    def method_first(self, x: torch.Tensor) -> torch.Tensor:
        q = self.scaled(x)
        kv = self._kv_quant(x)
        kv = self._kv_scale(kv)
        s = self._kv_sum(kv, x)
        return q * 2 + s
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

FILES = {"__init__.py": INIT, "weights.py": WEIGHTS, "model.py": MODEL}
WANT = {
    "chained": lambda x: x * 0.5 * 2 + (x * 3 + 1 + x),
    "made_first": lambda x: x * 0.5 * 2 + (x * 3 + 1 + x.sin()),
    "method_first": lambda x: x * 0.5 * 2 + (x * 3 + 1 + x),
}


def _entry(tmp_path: Path, files: dict[str, str] = FILES) -> Entry:
    folder = tmp_path / "pkg_ge_given_chain"
    folder.mkdir(exist_ok=True)
    for name, source in files.items():
        (folder / name).write_text(source, encoding="utf-8")
    return Entry(name="ge_given_chain", package="pkg_ge_given_chain", path=folder, idioms=(), upstream=(), needs=())


def _generated(tmp_path: Path, *, alone: bool) -> tuple[str, str]:
    (tmp_path / "out").mkdir(exist_ok=True)
    name, codes = generated_package(_entry(tmp_path), "ge", tmp_path / "out", alone=alone)
    return name, codes["model.py"]


def _edges(body: str) -> int:
    return body.count("npu_wait_tensor") + body.count("torchair.ops.wait") + body.count("torchair.ops.record")


def test_a_chain_reading_what_was_given_or_made_on_its_stream_needs_no_edge(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, alone=False)[1], "chained")
    assert body.count("npu_stream_switch") == 1 and _edges(body) == 0, body


@pytest.mark.parametrize("method", ["made_first", "method_first"])
def test_an_edge_stays_where_the_caller_made_or_may_change_what_the_chain_reads(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, alone=False)[1], method)
    assert body.count("npu_stream_switch") == 1 and _edges(body) > 0, body


def test_alone_the_base_is_read_from_disk(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, alone=True)[1], "chained")
    assert body.count("npu_stream_switch") == 1 and _edges(body) == 0, body


def test_alone_without_the_base_the_edge_stays(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    entry = _entry(tmp_path, {k: v for k, v in FILES.items() if k != "weights.py"})
    body = method_source(generated_package(entry, "ge", tmp_path / "out", alone=True)[1]["model.py"], "chained")
    assert _edges(body) > 0, body


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("method", WANT)
def test_race_free_and_exact(tmp_path: Path, method: str, alone: bool) -> None:
    name, _ = _generated(tmp_path, alone=alone)
    x = torch.randn(4, 3)
    got = run_generated(name, tmp_path / "out", "ge", lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, WANT[method](x))
