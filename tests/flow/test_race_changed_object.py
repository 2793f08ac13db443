"""An object the caller changes, given to a stream function whose parameter is annotated with its class
(``changed_objects.py``): kept alive for the side stream, as vllm_qwen3_dbo's dispatcher must be.

A parameter annotated as the user's class (``box: Box``) is taken for metadata whose tensors outlive the call,
and never kept. When the caller itself fills the object (``box.fill(x)``: a method called on it, or an attribute
stored on it), the tensor it holds was made on the caller's stream; the side body reads it through the object and
drops it, and the caller's next allocation raced with that read. The object is now kept (the record walks its
attributes): one ``record_stream``. An object the caller only passes on (its model's own, built once) is still
not kept: the count stays at the one tensor argument. Race-checked on every target that keeps memory.
"""

from __future__ import annotations

import pytest
import torch

from bench.sync_count import count_graph
from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Box:
    def __init__(self, t=None):
        self.t = t

    def fill(self, x):
        self.t = x * 2

    def take(self):
        t = self.t
        self.t = None
        return t + 3


class Model(nn.Module):
    @on_stream("side")
    def side(self, box: Box):
        return box.take()

    @on_stream("side")
    def side_meta(self, x, meta: "Box"):
        return x * meta.t

    def filled(self, x):
        box = Box()
        box.fill(x)
        y = self.side(box)
        z = x * 3
        return y + z

    def passed(self, x, meta):
        y = self.side_meta(x, meta)
        z = x * 3
        return y + z


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method, self.meta = Model(), method, Box(torch.full((2, 3), 2.0))

    def forward(self, x):
        if self.method == "filled":
            return self.model.filled(x * 1)
        return self.model.passed(x * 1, self.meta)
"""

_TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]


def _run(target: str, method: str) -> tuple[torch.Tensor, torch.Tensor, int]:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    trace = trace_graph(code, target, lambda m: m.Caller(method), (x,), eager_first=native)
    return trace.outputs, x * 2 + 3 + x * 3, count_graph(trace.dynamo[0])["record_stream"]


@pytest.mark.parametrize("target", _TARGETS)
def test_an_object_the_caller_fills_is_kept_for_the_side_stream(target: str) -> None:
    got, want, kept = _run(target, "filled")
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert kept == 1, "the object's one tensor"


@pytest.mark.parametrize("target", _TARGETS)
def test_an_object_the_caller_only_passes_on_is_not_kept(target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    assert "_stream(meta" not in code and "record_stream(meta" not in code
    x = torch.randn(2, 3)
    trace = trace_graph(code, target, lambda m: m.Caller("passed"), (x,), eager_first=target in ("cuda", "npugraph_ex"))
    torch.testing.assert_close(trace.outputs, x * 2 + x * 3, rtol=0, atol=0)
    assert count_graph(trace.dynamo[0])["record_stream"] == 1, "x alone"
