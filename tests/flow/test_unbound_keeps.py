"""A join keeps no name the caller first binds below it (``codegen/lower/flow/unbound_keeps.py``).

``bump`` writes ``x`` in place, and ``again`` follows it on ``side`` with no fork, so the join of ``bump`` keeps what
it holds for the caller's stream. What it holds includes the names grouped with ``x``: ``y = x[0]`` (a view), ``y =
extlib.pick(x)`` (a result that may be ``x``), bound further down. The keep stood before ``y`` was bound, and the
generated code raised ``UnboundLocalError`` (on main for the view; the result aliases of ``result_aliases.py`` would
have made the second one too). Now a name first bound below the join is not kept there: its memory is the caller's
own. Generated for portable and aclgraph, run race-checked, and compared exactly with the same arithmetic.
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
def pick(t):
    return t[: t.shape[0]]
"""

MODEL = """\
import torch
import extlib
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def bump(self, x):
        x.add_(1)
        return x * 2

    @on_stream("side")
    def again(self, r):
        return r * 3

    def view_bound_below(self, x):
        r = self.bump(x)
        s = self.again(r)
        z = torch.ones(x.shape) * 3
        w = x * 1
        y = x[0]
        return r + w + y + z + s

    def alias_bound_below(self, x):
        r = self.bump(x)
        s = self.again(r)
        z = torch.ones(x.shape) * 3
        w = x * 1
        y = extlib.pick(x)
        return r + w + y + z + s
""" + caller_source()

METHODS = ["view_bound_below", "alias_bound_below"]


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = written_package(tmp_path, "unboundkeep", target, {"model.py": MODEL}, beside={"extlib.py": STANDIN})
    return name, codes["model.py"]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    bumped = x + 1
    y = bumped[0] if method == "view_bound_below" else bumped
    return bumped * 2 + bumped + y + 3 + bumped * 6


@pytest.mark.parametrize("method", METHODS)
def test_no_keep_before_the_binding(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    assert "record_stream(y" not in body[: body.index("y = ")]


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", METHODS)
def test_runs_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(3, 4)
    try:
        got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    finally:
        sys.modules.pop("extlib", None)
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)
