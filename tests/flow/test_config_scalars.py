"""Attributes read from a configuration object and used as whole numbers hold no tensor: no function writes them.

``self.n_heads = config.heads // 1`` in ``__init__`` (``config`` a parameter: its attribute could be anything),
then ``q.view(self.n_heads, -1)`` or ``range(self.n_heads)``: the class uses the value where only a whole number is
taken, so it is plain (``int_uses.py``, ``scalar_attributes.py``). A side body giving it to a function of a module
the run cannot read (``extlib_config.product(self.n_heads, ...)``, which may write every argument) no longer changes
it for its caller, whose read of it right after keeps the overlap; nor does the caller giving it to such a function
wait for a side call reading it. What ``__init__`` reads from a parameter annotated as a transformers configuration
(``hf: PretrainedConfig``) is plain however the class uses it. An attribute read from the configuration but never
used as a number (``self.gain = config.gain``: a tensor here) stays state such a function may write: the caller's
read of it waits.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_package, run_generated
from corpus.registry import Entry
from method_caller import caller_source
from method_source import method_source

MODEL = """\
import extlib_config
import torch
from torch import nn
from npudsl import on_stream


class Config:
    def __init__(self):
        self.heads = 2
        self.dim = 3
        self.gain = torch.full((2, 3), 2.0)


CONFIG = Config()


class Model(nn.Module):
    def __init__(self, config=CONFIG, hf: "PretrainedConfig" = CONFIG):  # noqa: F821
        super().__init__()
        self.rope = hf.dim
        self.n_heads = config.heads // 1
        self.head_dim = config.dim
        self.gain = config.gain

    @on_stream("side")
    def by_plain(self, x):
        return x * extlib_config.product(self.n_heads, self.head_dim)

    @on_stream("side")
    def reads_plain(self, x):
        return x.view(self.n_heads, -1).view(2, 3) * 2

    @on_stream("side")
    def by_hf(self, x):
        return x * extlib_config.product(self.rope, 2)

    @on_stream("side")
    def by_gain(self, x):
        return x * extlib_config.product(self.gain, 1)

    def plain_after_body(self, x):
        y = self.by_plain(x)
        z = x * 5
        w = x.view(self.n_heads, self.head_dim) * 0 + len(range(self.n_heads)) + len([None] * self.head_dim)
        return y + z + w

    def plain_given(self, x):
        y = self.reads_plain(x)
        z = x * 5
        w = x * extlib_config.product(self.n_heads, self.head_dim) - x * 3 + 5
        return y + z + w

    def hf_after_body(self, x):
        y = self.by_hf(x)
        z = x * 5
        w = x * 0 + self.rope + 2
        return y + z + w

    def gain_after_body(self, x):
        y = self.by_gain(x)
        z = x * 5
        w = x * 0 + self.gain - 2 + 5
        return y + z + w
""" + caller_source()

EXTLIB = """\
def product(a, b):
    return a * b / 6 * 3
"""

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

KEPT = {
    "plain_after_body": "w = x.view(self.n_heads",
    "plain_given": "w = x * extlib_config.product",
    "hf_after_body": "w = x * 0 + self.rope",  # annotated as a transformers configuration: plain however used
}
WAITS = {"gain_after_body": "w = x * 0 + self.gain"}
EXPECTED = {  # what each method returns for ``x``, as on one stream
    "plain_after_body": lambda x: x * 3 + x * 5 + 5,
    "plain_given": lambda x: x * 2 + x * 5 + 5,
    "hf_after_body": lambda x: x * 3 + x * 5 + 5,
    "gain_after_body": lambda x: x * 1 + x * 5 + 5,
}


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    folder = tmp_path / "pkg_config_scalars"
    folder.mkdir(exist_ok=True)
    (folder / "__init__.py").write_text(INIT, encoding="utf-8")
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    entry = Entry(name="config_scalars", package="pkg_config_scalars", path=folder, idioms=(), upstream=(), needs=())
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / "extlib_config.py").write_text(EXTLIB, encoding="utf-8")  # outside the run: read by no transform
    name, codes = generated_package(entry, target, out)
    return name, codes["model.py"]


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _generated(tmp_path_factory.mktemp("portable"), "portable")[1]


@pytest.mark.parametrize("method", KEPT)
def test_plain_configuration_keeps_the_overlap(portable: str, method: str) -> None:
    body = method_source(portable, method)
    assert body.index('runtime.stream("side"') < body.index(KEPT[method]) < body.rindex("runtime.wait(")


@pytest.mark.parametrize("method", WAITS)
def test_other_configuration_reads_wait(portable: str, method: str) -> None:
    body = method_source(portable, method)
    before = body[: body.index(WAITS[method])]
    assert 'runtime.stream("side"' in before and 'Model.by_gain.join")' in before.rpartition("z = x * 5")[2]


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", EXPECTED)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, EXPECTED[method](x), rtol=0, atol=0)


CLASSES = """\
class Attention:
    def __init__(self, config, width, cache):
        self.n_heads = config.heads // 2
        self.width = width
        self.cache = cache
        self.gain = config.gain
        self.rope = config.rope

    def forward(self, q):
        out = q.view(-1, self.n_heads, self.width)
        rows = [out[:, i] for i in range(self.rope)]
        return out[:, : self.n_heads] * self.gain + self.cache + rows[0]
"""


def test_which_configuration_reads_are_plain() -> None:
    """Used as whole numbers (``view`` sizes, ``range``, a slice bound): plain; used otherwise: maybe a tensor."""
    from codegen.lower.flow.scalar_attributes import plain_attributes

    cls = ast.parse(CLASSES).body[0]
    assert isinstance(cls, ast.ClassDef)
    assert plain_attributes([cls]) == {"n_heads", "width", "rope"}
