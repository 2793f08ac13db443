"""``inplace=True`` writes where torch.nn.functional's body writes under the guards the call gives, not by its spelling.

``written_exprs.call_written`` took a literal ``inplace=True`` as a write of the first argument whatever the call's
other arguments said: ``F.dropout(x, 0.1, False, inplace=True)`` (eval: ``_VF.dropout_`` runs only ``if training``,
``torch_functional_table.py``: ``input:inplace:training``) was a write of ``x``, so a side call reading ``x`` was
joined before it (main: no overlap at all, the side call ran on the caller's stream). The spelling is now read
through the same table the rest of the flow reads (``torch_functional.guarded_writes``): the eval dropout keeps the
overlap; ``F.relu(x, inplace=True)``, a training dropout and one whose ``training`` is not a literal still write
``x`` and wait; ``self.buf`` the same way as object state.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
import torch.nn.functional as F
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), -1.0))

    @on_stream("side")
    def side(self, x):
        return x.tanh() + self.buf

    def eval_dropout(self, x):
        y = self.side(x)
        h = F.dropout(x, 0.1, False, inplace=True)
        return h + y

    def eval_dropout_state(self, x):
        y = self.side(x)
        F.dropout(self.buf, 0.1, training=False, inplace=True)
        return x + y

    def relu(self, x):
        y = self.side(x)
        h = F.relu(x, inplace=True)
        return h + y

    def relu_state(self, x):
        y = self.side(x)
        F.relu(self.buf, inplace=True)
        return x + y

    def train_dropout(self, x):
        y = self.side(x)
        h = F.dropout(x, 0.1, True, inplace=True)
        return h + y

    def module_dropout(self, x):
        y = self.side(x)
        h = F.dropout(x, 0.1, self.training, inplace=True)
        return h + y
""" + caller_source()

OVERLAPS = {"eval_dropout": "h = F.dropout(", "eval_dropout_state": "F.dropout(self.buf"}
WAITS = {
    "relu": "h = F.relu(",
    "relu_state": "F.relu(self.buf",
    "train_dropout": "h = F.dropout(",
    "module_dropout": "h = F.dropout(",
}
JOIN = re.compile(r'runtime\.wait\("m\.Model\.side\.join"\)\s*$')


def _body(method: str, target: str = "portable") -> str:
    return method_source(transform_source(SOURCE, path="m.py", target=target), method)


@pytest.mark.parametrize("method", OVERLAPS)
def test_the_guarded_off_write_keeps_the_overlap(method: str) -> None:
    before, after = _body(method).split(OVERLAPS[method])
    assert "runtime.stream" in before and not JOIN.search(before) and "runtime.wait(" in after


@pytest.mark.parametrize("method", WAITS)
def test_a_real_write_still_waits(method: str) -> None:
    body = _body(method)
    before = body[: body.index(WAITS[method])]
    assert "runtime.stream" not in before or JOIN.search(before), body


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("method", [*OVERLAPS, "relu", "relu_state"])
def test_race_free_and_exact(method: str, target: str) -> None:
    eager = target == "cuda"  # its events are made on a first eager step
    x = torch.randn(2, 3)
    code = transform_source(SOURCE, path="m.py", target=target)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller(method).eval(), (x,), eager_first=eager)
    got = run_checked(code, target, lambda m: m.Caller(method).eval(), (x,), eager_first=eager)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
