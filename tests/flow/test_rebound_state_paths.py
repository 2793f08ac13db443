"""State the caller points elsewhere around a side call is kept only where the side body reads that path.

``self.a.x = h * 2``, then ``u = self.side(h)``, then ``self.a.x = h * 3``: the tensor ``h * 2`` is dropped after the
call, so a side body reading it needs ``record_stream`` for it (``rebound_state.py``). A body reading only
``self.a.y`` does not read it. On main the body's reads were named by first attribute (``a``), and the caller kept
``self.a.x`` for a body reading ``self.a.y``: one ``record_stream`` too many. The reads are now paths
(``body_reads.callee_reads``), compared as ``paths_meet.py`` says; where ``Pair`` makes ``y`` from ``x``
(``self.y = self.x``: ``apart_attributes.py``), or the body reads ``self.a.x``, the keep stays. Race-free and exact.
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
    def __init__(self):
        super().__init__()
        self.x = torch.zeros(2, 3)
        MAKE_Y


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Pair()

    @on_stream("side")
    def side(self, h):
        return h * self.a.READ

    def rebound(self, h):
        self.a.x = h * 2
        u = self.side(h)
        self.a.x = h * 3
        v = h * self.a.x
        return u + v


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model = Model()

    def forward(self, x):
        return self.model.rebound(x * 1)
"""
CASES = {  # how ``Pair`` makes ``y``, what the side body reads; whether ``self.a.x`` is kept
    "sibling": ("self.y = torch.full((2, 3), 2.0)", "y", False),
    "same": ("self.y = torch.full((2, 3), 2.0)", "x", True),
    "alias": ("self.y = self.x", "y", True),
}
KEEP = 'runtime.record_stream(self.a.x, "side")'


def _source(case: str) -> str:
    make, read, _ = CASES[case]
    return SOURCE.replace("MAKE_Y", make).replace("READ", read)


@pytest.mark.parametrize("case", CASES)
def test_kept_only_where_the_body_reads_it(case: str) -> None:
    body = method_source(generated(_source(case)), "rebound")
    assert (KEEP in body) is CASES[case][2], body


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES)
def test_race_free_and_exact(case: str, target: str) -> None:
    source, x = _source(case), torch.randn(2, 3)
    want = eager_result(source, "rebound", x, runs=2 if target in ("cuda", "npugraph_ex") else 1)
    sync_counts(generated(source, target), target, "rebound", x, want)
