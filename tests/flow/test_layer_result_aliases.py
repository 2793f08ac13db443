"""The result of a submodule whose class the run does not read may be its input (``result_aliases.py``):
``nn.Identity`` returns the tensor it is given.

``y = self.ident(x)``, then a side call writing ``x``: the caller's read of ``y`` waits for it. Before, a class from
outside the run was taken to return a tensor of its own, ``y`` was apart from ``x``, and the race checker found the
side stream's write and the caller's read with no wait between. A layer making a tensor of its own (``nn.Linear``)
is grouped with its input too: that adds a wait only where a write meets a read (no corpus or example output
moved). Generated for portable and aclgraph, run race-checked, and compared exactly with the same arithmetic on
one stream.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source
from written_package import written_package

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ident = nn.Identity()

    @on_stream("side")
    def bump(self, x):
        x.add_(1)
        return x * 2

    def identity_read_after(self, x):
        y = self.ident(x)
        r = self.bump(x)
        z = torch.ones(x.shape) * 3
        w = y * 1
        return r + w + z
""" + caller_source()

METHODS = ["identity_read_after"]


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = written_package(tmp_path, "layeralias", target, {"model.py": MODEL})
    return name, codes["model.py"]


@pytest.mark.parametrize("method", METHODS)
def test_the_read_through_the_layer_result_waits(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    assert body.index("runtime.stream(") < body.index("z = ") < body.rindex("runtime.wait(", 0, body.index("w = "))


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", METHODS)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(3, 4)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, (x + 1) * 2 + (x + 1) + 3, rtol=0, atol=0)
