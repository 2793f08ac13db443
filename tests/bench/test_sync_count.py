"""What bench/sync_count.py counts, per target API, on small hand-written sources traced under the stand-ins."""

from __future__ import annotations

import pytest
import torch

from bench.sync_count import count_graph, total
from npudsl.testing.targets import trace_graph

NATIVE = """
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.{dev}.Stream()
        self.done = torch.{dev}.Event()

    def forward(self, x):
        y = x + 1
        self.side.wait_stream(torch.{dev}.current_stream())
        with torch.{dev}.stream(self.side):
            y.record_stream(self.side)
            z = y * 2
            self.done.record()
        torch.{dev}.current_stream().wait_event(self.done)
        return z + y
"""

ACLGRAPH = """
import torch
import torchair
from torch import nn

_EVENT = torchair.ops.npu_create_tagged_event("t")


class M(nn.Module):
    def forward(self, x):
        y = x + 1
        torchair.ops.npu_tagged_event_record(_EVENT)
        with torchair.scope.npu_stream_switch("s", 0):
            torchair.ops.npu_tagged_event_wait(_EVENT)
            torchair.ops.npu_record_tagged_stream(y, "s")
            z = y * 2
        with torchair.scope.limit_core_num(8, 16):
            w = y - 1
        return z, w
"""

GE = """
import torch
import torchair
from torch import nn


class M(nn.Module):
    def forward(self, x):
        y = x + 1
        with torchair.scope.npu_stream_switch("s", 0):
            z = torchair.scope.npu_wait_tensor(y, y) * 2
        token = torchair.ops.record()
        with torchair.scope.npu_stream_switch("s2", 0):
            torchair.ops.wait([token])
            w = x * 3
        return z, w
"""


def _counts(source: str, target: str) -> dict[str, int]:
    trace = trace_graph(source, target, lambda module: module.M(), (torch.randn(4),), eager_first=True)
    return dict(count_graph(trace.dynamo[0]))


@pytest.mark.parametrize(("target", "dev"), [("cuda", "cuda"), ("npugraph_ex", "npu")])
def test_native_calls(target: str, dev: str) -> None:
    # wait_stream: a record and a wait (its enter of the other stream is part of the call, not a switch)
    counts = _counts(NATIVE.format(dev=dev), target)
    assert counts == {"switch": 1, "record": 2, "wait": 2, "record_stream": 1}


def test_torchair_tagged_calls_and_core_limits() -> None:
    assert _counts(ACLGRAPH, "aclgraph") == {"switch": 1, "record": 1, "wait": 1, "record_stream": 1}


def test_ge_wait_tensor_and_tokens() -> None:
    counts = _counts(GE, "ge")
    assert counts == {"switch": 2, "record": 1, "wait": 2, "record_stream": 0}
    assert total(counts) == 5
