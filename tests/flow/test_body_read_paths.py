"""A side call's body reads its object's state by whole chains (``body_reads.py``): ``self.a.y``, not ``self.a``.

The side body reads ``self.a.y``; the caller writes the sibling ``self.a.x`` in place while the call is pending.
Named by first attribute (``reads_state``: ``a``), the call read all of ``self.a`` and the write waited for it (the
call ran at once on main). Read as the chain ``a.y``, the write of ``self.a.x`` overlaps the call, race-free and
exact. A write of the chain read (``self.a.y.add_(1)``), a body reading ``self.a`` whole through a method of it
(``self.a.total()``) or handing it on (``peek(self.a)``), still wait before the write.
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


def peek(pair):
    return pair.x


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("x", torch.ones(2, 3))
        self.register_buffer("y", torch.full((2, 3), 2.0))

    def total(self):
        return self.x + self.y


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Pair()

    @on_stream("side")
    def side(self, h):
        return h * self.a.y

    @on_stream("side")
    def side_whole(self, h):
        return h * self.a.total()

    @on_stream("side")
    def side_handed(self, h):
        return h * peek(self.a)

    def sibling(self, h):
        u = self.side(h)
        self.a.x.add_(1)
        v = h * self.a.x
        return u + v

    def same(self, h):
        u = self.side(h)
        self.a.y.add_(1)
        v = h * self.a.y
        return u + v

    def whole(self, h):
        u = self.side_whole(h)
        self.a.x.add_(1)
        v = h * self.a.x
        return u + v

    def handed(self, h):
        u = self.side_handed(h)
        self.a.x.add_(1)
        v = h * self.a.x
        return u + v


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(), method

    def forward(self, x):
        return getattr(self.model, self.method)(x * 1), torch.zeros(1)
"""

_METHODS = ["sibling", "same", "whole", "handed"]


def _overlapped(body: str) -> bool:
    """The write ``self.a.?.add_(1)`` runs while the call may still be pending (its wait comes after it)."""
    write = body.index(".add_(1)")
    return "join" in body[write:] and "stream(" in body[:write]


def test_a_write_of_a_sibling_overlaps_the_call() -> None:
    assert _overlapped(method_source(generated(SOURCE), "sibling"))


@pytest.mark.parametrize("method", ["same", "whole", "handed"])
def test_a_write_of_what_the_body_reads_waits(method: str) -> None:
    assert not _overlapped(method_source(generated(SOURCE), method))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", _METHODS)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert_race_free_and_exact(SOURCE, target, method, torch.randn(2, 3))
