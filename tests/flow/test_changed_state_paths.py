"""A caller changing part of its module's state through a local is read by the path the local holds
(``unkept_state.changed_state``: ``held_paths``), against the side body's reads as paths (``body_reads.py``).

``d = self.a.d; d.prepare(h)`` leaves a tensor on ``self.a.d`` made on the caller's stream. A side call whose body
reads ``self.a.e.buf`` reads nothing of it; named by first attribute (``a`` held, ``a`` read), the call was taken to
read what the caller left on its state and ran on the caller's stream (NPD501, no overlap). Read as paths (``a.d``
held, ``a.e.buf`` read), it runs apart, race-free and exact. A body reading ``self.a.d.buf`` still reads what the
caller made: the call keeps it or stays at once (it stays, NPD501), race-free.
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


class Part:
    def __init__(self):
        self.buf = torch.ones(2, 3)

    def prepare(self, h):
        self.buf = h * 2


class Pair:
    def __init__(self):
        self.d = Part()
        self.e = Part()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Pair()

    @on_stream("side")
    def side_e(self, h):
        return h * self.a.e.buf

    @on_stream("side")
    def side_d(self, h):
        return h * self.a.d.buf

    def sibling(self, h):
        d = self.a.d
        d.prepare(h)
        u = self.side_e(h)
        v = h * 3
        return u + v

    def same(self, h):
        d = self.a.d
        d.prepare(h)
        u = self.side_d(h)
        v = h * 3
        return u + v


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(), method

    def forward(self, x):
        return getattr(self.model, self.method)(x * 1), torch.zeros(1)
"""


def test_a_side_call_reading_a_sibling_runs_apart() -> None:
    body = method_source(generated(SOURCE), "sibling")
    assert 'with runtime.stream("side", 0):' in body, body


def test_a_side_call_reading_what_the_caller_changed_is_kept_or_at_once() -> None:
    body = method_source(generated(SOURCE), "same")
    assert "runtime.stream(" not in body or "record_stream(self.a.d.buf" in body, body


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["sibling", "same"])
def test_race_free_and_exact(method: str, target: str) -> None:
    assert_race_free_and_exact(SOURCE, target, method, torch.randn(2, 3))
