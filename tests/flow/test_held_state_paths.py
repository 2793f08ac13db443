"""A write through a local holding part of the state is a write of that part, not of the first attribute above it.

``d = self.a.d`` then ``d.buf.add_(1)`` (or ``d.prepare(z)``, a method writing ``d.buf``): the caller's writes read
the local by its first attribute (``self.a``), and a statement's state reads were named that way too, so a side call
given the sibling ``self.a.e.buf`` was joined before the write, spelled through the local or out
(``self.a.d.buf.add_(1)``). Reads are now whole chains (``read_paths.py``) and a local holds the path it was bound
to (``held_paths.py``): the write waits for nothing, and the side call is joined where its result is read. Where the
call reads the part written (``self.a.d.buf``, or the whole ``self.a``) the wait stays before the write. Race-free
and exact on every target.
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


class D:
    def __init__(self, width: int):
        self.buf = torch.arange(float(width)).repeat(2, 1)

    def prepare(self, h):
        self.buf.copy_(h)


class A(nn.Module):
    def __init__(self):
        super().__init__()
        self.d = D(3)
        self.e = D(3)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = A()

    @on_stream("side")
    def mul(self, x, t):
        return x @ torch.ones(3, 3) * t

    def sibling_local(self, x):
        d = self.a.d
        y = self.mul(x, self.a.e.buf)
        z = x * 3
        d.buf.add_(1)
        return y + z * d.buf

    def sibling_spelled(self, x):
        y = self.mul(x, self.a.e.buf)
        z = x * 3
        self.a.d.buf.add_(1)
        return y + z * self.a.d.buf

    def sibling_method(self, x):
        d = self.a.d
        y = self.mul(x, self.a.e.buf)
        z = x * 3
        d.prepare(z)
        return y + z * d.buf

    def sibling_alias(self, x):
        o = self.a
        d = o.d
        y = self.mul(x, self.a.e.buf)
        z = x * 3
        d.buf.add_(1)
        return y + z * d.buf

    def same_local(self, x):
        d = self.a.d
        y = self.mul(x, self.a.d.buf)
        z = x * 3
        d.buf.add_(1)
        return y + z * d.buf

    def same_spelled(self, x):
        y = self.mul(x, self.a.d.buf)
        z = x * 3
        self.a.d.buf.add_(1)
        return y + z * self.a.d.buf

    def whole_local(self, x):
        d = self.a
        y = self.mul(x, self.a.d.buf)
        z = x * 3
        d.d.buf.add_(1)
        return y + z * d.d.buf
""" + caller_source()

APART = ["sibling_alias", "sibling_local", "sibling_method", "sibling_spelled"]
WAITING = ["same_local", "same_spelled", "whole_local"]


def _order(method: str) -> tuple[int, int]:
    """Where the wait for ``mul`` and the caller's write stand in the generated method."""
    lines = [line.strip() for line in method_source(generated(SOURCE), method).splitlines()]
    write = next(i for i, line in enumerate(lines) if line.endswith((".buf.add_(1)", "d.prepare(z)")))
    return lines.index('runtime.wait("m.Model.mul.join")'), write


@pytest.mark.parametrize("method", APART)
def test_a_write_of_a_sibling_waits_for_nothing(method: str) -> None:
    wait, write = _order(method)
    assert write < wait


@pytest.mark.parametrize("method", WAITING)
def test_a_write_of_what_the_call_reads_waits(method: str) -> None:
    wait, write = _order(method)
    assert wait < write


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", APART + WAITING)
def test_race_free_and_exact(method: str, target: str) -> None:
    x = torch.randn(2, 3)
    want = eager_result(SOURCE, method, x, runs=2 if target in NATIVE else 1)
    counts = sync_counts(generated(SOURCE, target), target, method, x, want)
    assert counts["wait"] == 2
