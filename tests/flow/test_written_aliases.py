"""A side call writing in place a view of a tensor, or a result that is it (``c = x.mul_(1)``), writes that tensor:
the caller's next read of it waits for the call (``planner._view``: what the call writes, widened to the names that
share its memory, is among what it makes).

Before, only the name passed was the call's: ``v = x[0]``, ``self.side(v)`` writing ``v.mul_(2)``, then ``x * 3``
on the caller's stream read ``x`` with no wait, and the race checker found it. Generated for portable and
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


class Model(nn.Module):
    @on_stream("side")
    def side(self, v):
        v.mul_(2)
        return v * 1

    def view_written_aside(self, x):
        v = x[0]
        y = self.side(v)
        z = torch.ones(x.shape) * 3
        w = x * 3
        return y.sum() + z + w

    def result_written_aside(self, x):
        c = x.mul_(1)
        y = self.side(c)
        z = torch.ones(x.shape) * 3
        w = x * 3
        return y.sum() + z + w
""" + caller_source()

METHODS = ["view_written_aside", "result_written_aside"]


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = written_package(tmp_path, "written_aliases", target, {"model.py": MODEL})
    return name, codes["model.py"]


@pytest.mark.parametrize("method", METHODS)
def test_the_read_of_the_written_tensor_waits(tmp_path: Path, method: str) -> None:
    """The call overlaps ``z``, which reads nothing it writes; ``x * 3`` comes after its join."""
    body = method_source(_generated(tmp_path, "portable")[1], method)
    assert body.index("runtime.stream(") < body.index("z = ") < body.rindex("runtime.wait(") < body.index("w = x * 3")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", METHODS)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(3, 4)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    written = x.clone()
    if method == "view_written_aside":
        written[0] *= 2
        want = (written[0] * 1).sum() + 3 + written * 3
    else:
        want = (written * 2).sum() + 3 + written * 6
    torch.testing.assert_close(got, want, rtol=0, atol=0)
