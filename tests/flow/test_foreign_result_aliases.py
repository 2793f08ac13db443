"""The result of a function the run cannot read may be (a view of) any tensor it was given: ``y =
extlib.pick(x)`` binds ``y`` to memory ``x`` may hold (``codegen/lower/flow/result_aliases.py``); so does a view
whatever its arguments (``v = x.view(x.shape[0], -1)``, ``v = torch.narrow(x, 0, 0, n)``).

A side call writing ``x`` is joined before the caller reads ``y``; a side call reading ``y`` is joined before the
caller writes ``x``. Before, ``y`` was a fresh tensor: neither join was placed, and the race checker found both.
The stand-in ``extlib`` returns a view of its argument, as an indexing helper of another package may. Generated
for portable and aclgraph, run race-checked, and compared exactly with the same arithmetic on one stream.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source
from written_package import written_package

STANDIN = """\
def pick(t, rows=None):
    return t[: t.shape[0] if rows is None else rows]


class sub:
    pick = staticmethod(pick)
"""

MODEL = """\
import torch
import extlib
from extlib import pick
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def bump(self, x):
        x.add_(1)
        return x * 2

    @on_stream("side")
    def side(self, x):
        return x * 2

    def written_aside_read_through_result(self, x):
        y = extlib.pick(x)
        r = self.bump(x)
        z = torch.ones(x.shape) * 3
        w = y * 1
        return r + w + z

    def read_aside_through_result_written(self, x):
        y = pick(x, rows=x.shape[0])
        r = self.side(y)
        z = torch.ones(x.shape) * 3
        x.add_(1)
        return r + x + z

    def written_aside_read_through_chain(self, x):
        y = extlib.sub.pick(x)
        r = self.bump(x)
        z = torch.ones(x.shape) * 3
        w = y * 1
        return r + w + z

    def written_aside_read_through_view(self, x):
        v = x.view(x.shape[0], -1)
        r = self.bump(x)
        z = torch.ones(x.shape) * 3
        w = v * 1
        return r + w + z

    def read_aside_through_narrow_written(self, x):
        v = torch.narrow(x, 0, 0, x.shape[0])
        r = self.side(v)
        z = torch.ones(x.shape) * 3
        x.add_(1)
        return r + x + z
""" + caller_source()

RACED = [
    "written_aside_read_through_result",
    "read_aside_through_result_written",
    "written_aside_read_through_chain",
    "written_aside_read_through_view",
    "read_aside_through_narrow_written",
]
READ_ASIDE = ("read_aside_through_result_written", "read_aside_through_narrow_written")


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    """(the generated package's name, its ``model.py``), under ``tmp_path / "out"`` with the stand-in."""
    name, codes = written_package(tmp_path, "extalias", target, {"model.py": MODEL}, beside={"extlib.py": STANDIN})
    return name, codes["model.py"]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    """The same arithmetic, on one stream."""
    return x * 2 + (x + 1) + 3 if method in READ_ASIDE else (x + 1) * 2 + (x + 1) + 3


@pytest.mark.parametrize("method", RACED)
def test_the_caller_waits_before_the_other_name_is_used(tmp_path: Path, method: str) -> None:
    """The side call overlaps the caller's next statement; the use through the other name comes after its join."""
    body = method_source(_generated(tmp_path, "portable")[1], method)
    use = "x.add_(1)" if method in READ_ASIDE else "w = "
    assert body.index("runtime.stream(") < body.index("z = ") < body.rindex("runtime.wait(") < body.index(use)


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", RACED)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(3, 4)
    try:
        got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    finally:
        sys.modules.pop("extlib", None)
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)
