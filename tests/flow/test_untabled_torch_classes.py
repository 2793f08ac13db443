"""A module class of torch outside ``torch.nn.modules``, or of torch_npu, may write its state when called.

``self.fused = BNReLU2d(nn.BatchNorm2d(3), nn.ReLU())`` (``torch.ao.nn.intrinsic``, a ``Sequential`` whose batch
norm updates its running stats in place), then ``self.fused(z)`` on the caller's stream while a side call reads
``self.fused[0].running_mean``: classes from torch and torch_npu were known to write nothing, as ``nn.Linear`` is,
though the table of torch's module methods (``torch_module_methods.py``) reads ``torch.nn.modules`` only (the race
checker on main: "read on stream 'side' ... and written in place on stream 'default' with no wait in between").
torch_npu's module classes write too: ``torch_npu.contrib.module.FastSyncBatchNorm.forward`` counts its batches with
``self.num_batches_tracked.add_(1)``. Such a class's methods are now unknown: they may write the object's state
(``unread_methods.py``), as a class the run cannot read; an op of torch or torch_npu (``torch.zeros``) makes a tensor,
and ``nn.Linear`` keeps what torch's sources say of it.
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
from torch import nn
from torch.ao.nn.intrinsic import BNReLU2d
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fused = BNReLU2d(nn.BatchNorm2d(3), nn.ReLU())
        self.lin = nn.Linear(3, 3)
        self.buf = torch.zeros(3)
        with torch.no_grad():
            self.fused[0].running_mean.fill_(2.0)
            self.lin.weight.fill_(2.0)

    @on_stream("side")
    def side_fused(self, x):
        return x * self.fused[0].running_mean

    @on_stream("side")
    def side_lin(self, x):
        return x * self.lin.weight[0]

    def fused_call(self, x):
        y = self.side_fused(x)
        z = x * 5
        w = self.fused(z.view(2, 3, 1, 1))
        return y + z + w.view(2, 3) * 0

    def linear_call(self, x):
        y = self.side_lin(x)
        z = x * 5
        w = self.lin(z)
        return y + z + w * 0
""" + caller_source()

NPU = """\
import torch
import torch_npu
from torch import nn
from torch_npu.contrib.module import FastBatchNorm1d
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = FastBatchNorm1d(3)
        self.fast = torch_npu.contrib.module.FastBatchNorm1d(3)

    @on_stream("side")
    def side_norm(self, x):
        return x * self.norm.running_mean

    @on_stream("side")
    def side_fast(self, x):
        return x * self.fast.running_mean

    def npu_norm(self, x):
        y = self.side_norm(x)
        z = x * 5
        w = self.norm(z)
        return y + z + w * 0

    def npu_fast(self, x):
        y = self.side_fast(x)
        z = x * 5
        w = self.fast(z)
        return y + z + w * 0
"""

WRITES = {"fused_call": "w = self.fused(", "npu_norm": "w = self.norm(z)", "npu_fast": "w = self.fast(z)"}


@pytest.mark.parametrize("method", WRITES)
def test_the_call_waits_for_the_pending_call(method: str) -> None:
    source = NPU if method.startswith("npu") else SOURCE
    body = method_source(transform_source(source, path="m.py", target="portable"), method)
    before = body[: body.index(WRITES[method])]
    assert re.search(r'runtime\.wait\("m\.Model\.side_\w+\.join"\)', before), body


def test_a_torch_module_of_the_table_keeps_the_overlap() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "linear_call")
    assert body.index('runtime.stream("side"') < body.index("w = self.lin(z)") < body.rindex("runtime.wait("), body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", ["fused_call", "linear_call"])
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    x = torch.randn(2, 3)
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,))
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
