"""A keep named through an object (``state_keeps.py``) is spelled as the planner spells the user's expressions.

``bs["a"].load(x)`` fills a box the side call is given (``self.side(bs["a"])``); the keep names the tensor the
body reads, ``bs["a"].t``. It was spelled with ``ast.unparse``, ``bs['a'].t``, a line in another style beside
the user's own; it now comes from ``spelling.spelled_expr``, as every other expression the planner copies.
"""

from __future__ import annotations

import torch

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Box:
    def __init__(self):
        self.k = 2

    def load(self, x):
        self.t = x * self.k

    def take(self):
        t = self.t
        self.t = None
        return t + 3


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.boxes = {"a": Box()}

    @on_stream("side")
    def side(self, box: Box):
        return box.take()

    def forward(self, x):
        bs = self.boxes
        bs["a"].load(x * 1)
        y = self.side(bs["a"])
        z = x * 3
        return y + z
"""


def test_the_keep_is_spelled_in_double_quotes() -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    assert 'runtime.record_stream(bs["a"].t, "side")' in code


def test_race_free_and_exact() -> None:
    x = torch.randn(2, 3)
    got = run_checked(transform_source(SOURCE, path="m.py", target="portable"), "portable", lambda m: m.Model(), (x,))
    torch.testing.assert_close(got, x * 2 + 3 + x * 3)
