"""What a submodule's call writes of its argument, where ``__init__`` names its class through a module or an alias.

``self.dotted = layers.Bump()`` (``from . import layers``) and ``self.alias = Alias()`` (``Alias = layers.Bump`` at
module level), ``Bump.forward`` doubling its input in place: the caller's ``self.dotted(x)`` writes ``x``. Before,
``imported_writes.py`` read a class only by a bare name the module defines or imports, and took any other name for
a class the run cannot read that writes nothing: the caller ran the call while the side stream still read ``x`` (a
race the checker reports on main). Now ``layers.Bump`` is read in ``layers.py``, and a name bound otherwise (an
alias, a local of ``__init__``) may be any class: it writes every argument.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_files, run_generated
from method_caller import caller_source
from method_source import method_source

LAYERS = """\
from torch import nn


class Bump(nn.Module):
    def forward(self, t):
        t.mul_(2)
        return t
"""

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from . import layers

Alias = layers.Bump


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dotted = layers.Bump()
        self.alias = Alias()

    @on_stream("side")
    def send(self, x):
        return x.tanh()

    def by_dotted(self, x):
        a = self.send(x)
        h = self.dotted(x)
        return h + a

    def by_alias(self, x):
        a = self.send(x)
        h = self.alias(x)
        return h + a
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

METHODS = {"by_dotted": "h = self.dotted(x)", "by_alias": "h = self.alias(x)"}


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = generated_files(
        tmp_path, "pkg_class_writes", {"__init__.py": INIT, "layers.py": LAYERS, "model.py": MODEL}, target
    )
    return name, codes["model.py"]


@pytest.mark.parametrize("method", METHODS)
def test_the_write_waits_for_the_side_read(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    assert "runtime.wait" not in body.split(METHODS[method])[1]  # on main: the side's join waited after it


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"])
@pytest.mark.parametrize("method", METHODS)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), eager_first=native, method=method)
    torch.testing.assert_close(got, x * 2 + x.tanh())
