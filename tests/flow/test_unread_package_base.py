"""A file transformed alone whose class derives from a base in a file of its package the run does not hold.

``model.py`` alone, with ``class Model(Base)`` and ``from .base import Base``: ``self.update()`` (``Base.update``:
``self.buf.mul_(2)``) and ``self.norm(x)`` (an attribute ``Base`` assigns, or a method it defines: the run cannot
tell) may write any of the object's state. Before, a base of the package the run lacked was read as one whose
methods write only their arguments, so ``self.update()`` ran while a side call still read ``self.buf`` (the race
checker, on the files-alone output; the output of both files together read ``base.py`` and was right). Such a
base is now as unread as one from outside the package (``read_classes.py``): safety does not depend
on which files a run holds (CONTRACT section 2), at the cost of overlap in files transformed alone.
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

from .base import Base


class Model(Base):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), 2.0))

    @on_stream("side")
    def side(self, x):
        return x * self.buf

    def method(self, x):
        y = self.side(x)
        z = x * 5
        self.update()
        self.buf.div_(2)
        return y + z
""" + caller_source()

BASE = """\
from torch import nn


class Base(nn.Module):
    def update(self):
        self.buf.mul_(2)
"""


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = written_package(tmp_path, "package_base", target, {"model.py": MODEL, "base.py": BASE}, alone=True)
    return name, codes["model.py"]


def test_the_call_waits_for_the_side_call(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "method")
    before = body[: body.index("self.update()")]
    assert 'runtime.stream("side"' in before
    assert before.count("runtime.record(") <= before.count("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_race_free_and_exact(tmp_path: Path, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method="method")
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)
