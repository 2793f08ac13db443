"""``getattr(obj, name)`` reads an attribute of ``obj``: a write through it writes the object's state.

``getattr(self, self.which).copy_(t)`` in a side body wrote ``self.acc`` with no name of the chain spelled, so the
body was taken to write none of its object's state, and the caller's ``self.total()`` (reading ``self.acc``) ran
before the join: the race checker saw the side stream's write and the caller's read with no wait between. The
chain below ``getattr(obj, ...)`` is ``obj`` (``view_roots.view_base``), and the attribute written is the one
named, or any (``*``) where the name is computed (``state_views.first_attribute``). The caller's side: a write
through ``getattr`` after a side call reading the state waits for it.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import NATIVE, TARGETS, eager_result, generated, sync_counts

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(3))
        self.which = "acc"

    @on_stream("side")
    def fill(self, x):
        getattr(self, self.which).copy_(x @ torch.ones(3, 3) @ torch.ones(3, 3))
        return x * 2

    @on_stream("side")
    def fill_named(self, x):
        getattr(self, "acc").copy_(x @ torch.ones(3, 3) @ torch.ones(3, 3))
        return x * 2

    @on_stream("side")
    def scaled(self, x):
        return x @ torch.ones(3, 3) @ torch.ones(3, 3) * self.acc

    def total(self):
        return self.acc * 1

    def computed(self, x):
        y = self.fill(x)
        w = x * 3
        t = self.total()
        return y + t + w

    def named(self, x):
        y = self.fill_named(x)
        w = x * 3
        t = self.total()
        return y + t + w

    def caller_writes(self, x):
        y = self.scaled(x)
        w = x * 3
        getattr(self, self.which).add_(1)
        return y + w + self.acc
""" + caller_source()

_ORDER = {
    "computed": ("w = x * 3", "m.Model.fill.join", "t = self.total()"),
    "named": ("w = x * 3", "m.Model.fill_named.join", "t = self.total()"),
    "caller_writes": ("w = x * 3", "m.Model.scaled.join", "getattr(self, self.which).add_(1)"),
}


@pytest.mark.parametrize("method", sorted(_ORDER))
def test_joined_before_the_state_is_read_or_written(method: str) -> None:
    body = method_source(generated(SOURCE), method)
    before, event, after = _ORDER[method]
    wait = body.index(f'runtime.wait("{event}")')
    assert body.index(before) < wait < body.index(after)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", sorted(_ORDER))
def test_race_free_and_exact(method: str, target: str) -> None:
    x = torch.randn(3)
    want = eager_result(SOURCE, method, x, runs=2 if target in NATIVE else 1)
    assert sync_counts(generated(SOURCE, target), target, method, x, want)["switch"] == 1
