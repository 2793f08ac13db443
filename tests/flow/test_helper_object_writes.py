"""A helper writing an object handed to it through an unannotated parameter counts as a write of that object.

``def step(m): m.t.add_(1)`` called as ``step(self.meta)`` (``self.meta: Box``): the helper's parameter says
nothing of its class, and its write is of whatever it is given. Pinned on three shapes, each race-free and exact on
every target: the caller's ``step(self.meta)`` after a side call reading ``meta.t`` (given as ``meta: Box``) waits
for it; a side body calling ``step(self.meta)`` makes the caller's later read of ``self.meta.t`` wait; so does one
calling ``step(meta)`` on the object it is given. No race on main (each shape checked there with the race
checker: the helper's write already counts); the pins keep it so.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source
from method_trace import TARGETS, assert_race_free_and_exact, generated

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Box:
    def __init__(self, t):
        self.t = t


def step(m):
    m.t.add_(1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.meta: Box = Box(torch.ones(2, 3))

    @on_stream("side")
    def side_read(self, x, meta: Box):
        return x * meta.t

    @on_stream("side")
    def side_step(self, x):
        step(self.meta)
        return x * 2

    @on_stream("side")
    def side_step_given(self, x, meta: Box):
        step(meta)
        return x * 2

    def caller_steps(self, x):
        y = self.side_read(x, self.meta)
        z = x * 3
        step(self.meta)
        return y + z

    def body_steps(self, x):
        y = self.side_step(x)
        z = x * 3
        w = z * self.meta.t
        return y + w

    def given_steps(self, x):
        y = self.side_step_given(x, self.meta)
        z = x * 3
        w = z * self.meta.t
        return y + w


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(), method

    def forward(self, x):
        return getattr(self.model, self.method)(x * 1), torch.zeros(1)
"""

_READ = "w = z * self.meta.t"
_ORDERED = {"caller_steps": "step(self.meta)", "body_steps": _READ, "given_steps": _READ}


@pytest.mark.parametrize("method", list(_ORDERED))
def test_the_write_or_read_waits_for_the_call(method: str) -> None:
    body = method_source(generated(SOURCE), method)
    assert body.rindex('runtime.wait("m.Model.side_') < body.index(_ORDERED[method]), body


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", list(_ORDERED))
def test_race_free_and_exact(method: str, target: str) -> None:
    assert_race_free_and_exact(SOURCE, target, method, torch.randn(2, 3))
