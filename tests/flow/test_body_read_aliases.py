"""A side body's read of ``self.a.y`` is named by its path only where ``y`` is no other attribute's memory.

``body_reads.py`` named a side body's reads of its object by whole chains, so the caller's in-place write of the
sibling ``self.a.x`` overlapped a side call reading ``self.a.y``. Where ``Pair.__init__`` makes ``y`` the memory of
``x`` (``self.y = self.x``, a view of it, one parameter stored on both), that write lands on what the side stream
still reads: on main the race checker reported "tensor 'self.model.a.y' is read on stream 'side' ... and written in
place on stream 'default' with no wait in between". The run now names the read ``a.y`` only where every store to
``y`` makes new memory in a class that takes no attribute from another (``apart_attributes.py``); elsewhere the read
is of ``self.a`` whole and the write waits. Distinct buffers still overlap.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source
from method_trace import TARGETS, eager_result, generated, sync_counts

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Pair(nn.Module):
    def __init__(self, t=None):
        super().__init__()
        self.register_buffer("x", torch.ones(2, 3))
        MAKE_Y

    def forward(self, h):
        return h


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Pair(torch.ones(2, 3))

    @on_stream("side")
    def side(self, h):
        return h * self.a.y

    def sibling(self, h):
        u = self.side(h)
        self.a.x.add_(1)
        v = h * self.a.x
        return u + v
"""
MAKES = {  # how ``Pair`` makes ``y``; whether the write of ``x`` may overlap the side call
    "distinct": ('self.register_buffer("y", torch.full((2, 3), 2.0))', True),
    "same": ("self.y = self.x", False),
    "view": ('self.register_buffer("y", self.x.view(2, 3))', False),
    "given": ('self.register_buffer("y", t)\n        self.x = t', False),
    "parameter": ("self.y = nn.Parameter(t)\n        self.x = t", False),
}
CALLER = """

class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model = Model()

    def forward(self, x):
        return self.model.sibling(x * 1)
"""


def _source(make: str) -> str:
    return SOURCE.replace("MAKE_Y", MAKES[make][0]) + CALLER


def _overlapped(body: str) -> bool:
    """The write ``self.a.x.add_(1)`` runs while the call may still be pending (its wait comes after it)."""
    write = body.index(".add_(1)")
    return "join" in body[write:] and "stream(" in body[:write]


@pytest.mark.parametrize("make", MAKES)
def test_the_write_overlaps_only_memory_of_its_own(make: str) -> None:
    body = method_source(generated(_source(make)), "sibling")
    assert _overlapped(body) is MAKES[make][1], body


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("make", [m for m in MAKES if m != "parameter"])  # aot_autograd refuses a parameter
# sharing a mutated buffer's storage: the generated code is what that case asserts
def test_race_free_and_exact(make: str, target: str) -> None:
    source, x = _source(make), torch.randn(2, 3)
    want = eager_result(source, "sibling", x, runs=2 if target in ("cuda", "npugraph_ex") else 1)
    sync_counts(generated(source, target), target, "sibling", x, want)
