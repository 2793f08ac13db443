"""The result of a function of the run is the memory of the parameters its ``return`` may give
(``codegen/lower/flow/run_results.py``): ``y = pick(x)`` with ``def pick(t): return t[: t.shape[0]]`` binds ``y``
to ``x``'s memory.

A side call writing ``x`` is joined before the caller reads ``y``, and a side call reading ``y`` before the caller
writes ``x``; before, ``y`` was a fresh tensor and the race checker found both. Read through a module function, a
method of the object, and a function that returns another's result; a function returning a tensor of its own
(``t * 2``) leaves its result apart from ``x``: the caller reads it beside the side call. Generated for portable and
aclgraph, run race-checked, and compared exactly with the same arithmetic on one stream.
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


def pick(t):
    return t[: t.shape[0]]


def pick_again(t, rows):
    v = t.view(t.shape[0], -1)
    return pick(v)


def doubled(t):
    return t * 2


class Model(nn.Module):
    @on_stream("side")
    def bump(self, x):
        x.add_(1)
        return x * 2

    @on_stream("side")
    def side(self, x):
        return x * 2

    def flat(self, t):
        return t.reshape(t.shape[0], -1)

    def written_aside_read_through_helper(self, x):
        y = pick(x)
        r = self.bump(x)
        z = torch.ones(x.shape) * 3
        w = y * 1
        return r + w + z

    def read_aside_through_method_written(self, x):
        y = self.flat(x)
        r = self.side(y)
        z = torch.ones(x.shape) * 3
        x.add_(1)
        return r + x + z

    def written_aside_read_through_chain(self, x):
        y = pick_again(x, rows=2)
        r = self.bump(x)
        z = torch.ones(x.shape) * 3
        w = y * 1
        return r + w + z

    def fresh_result_read_beside(self, x):
        y = doubled(x)
        r = self.bump(x)
        w = y * 1
        z = torch.ones(x.shape) * 3
        return r + w + z
""" + caller_source()

RACED = ["written_aside_read_through_helper", "read_aside_through_method_written", "written_aside_read_through_chain"]


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    """(the generated package's name, its ``model.py``), under ``tmp_path / "out"``."""
    name, codes = written_package(tmp_path, "runalias", target, {"model.py": MODEL})
    return name, codes["model.py"]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    """The same arithmetic, on one stream."""
    if method == "read_aside_through_method_written":
        return x * 2 + (x + 1) + 3
    if method == "fresh_result_read_beside":
        return (x + 1) * 2 + x * 2 + 3
    return (x + 1) * 2 + (x + 1) + 3


@pytest.mark.parametrize("method", RACED)
def test_the_caller_waits_before_the_other_name_is_used(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    use = body.index("x.add_(1)" if method.startswith("read_aside") else "w = ")
    assert body.index("runtime.stream(") < body.index("z = ") < body.rindex("runtime.wait(", 0, use)


def test_a_fresh_result_is_read_beside_the_side_call(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "fresh_result_read_beside")
    assert body.index("runtime.stream(") < body.index("w = y * 1") < body.rindex("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*RACED, "fresh_result_read_beside"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(3, 4)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)
