"""A side body that reads tensors through a plain object it is given (``dispatcher.permute2()`` reading
``self.permuted_tokens``, vllm_qwen3_dbo): the tensor the caller's stream made is kept alive for the side stream.

The planner keeps the argument (``record_stream(box, ...)``); the record walks a plain object's attributes, one
level, as it walks tuples, lists and dicts, so the object's tensors are kept: the one the body reads and drops
no longer races with the caller's next allocation. A module given to the body is never walked (its parameters
live as long as the model), nor an object inside the object. Race-checked on every target that keeps memory
(GE plans memory itself) and counted: one ``record_stream`` for the object's one tensor.
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
    def __init__(self, inner=None):
        self.inner, self.count = inner, 3

    def fill(self, x):
        self.t = x * 2

    def take(self):
        t = self.t
        self.t = None
        return t + self.count


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    @on_stream("side")
    def side(self, box):
        return box.take()

    @on_stream("side")
    def side_module(self, x, box, proj):
        return proj(x) * box.count

    def forward(self, x):
        box = Box()
        box.fill(x)
        y = self.side(box)
        z = x * 3
        return y + z

    def module(self, x):
        box, proj = Box(Box()), self.proj
        y = self.side_module(x, box, proj)
        z = x * 3
        return y + z


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(), method

    def forward(self, x):
        return getattr(self.model, self.method)(x * 1)
"""

_TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]


def _run(target: str, method: str) -> tuple[torch.Tensor, int]:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    torch.manual_seed(0)
    trace = trace_graph(code, target, lambda m: m.Caller(method), (x,), eager_first=target in ("cuda", "npugraph_ex"))
    return trace.outputs - (x * 2 + 3 + x * 3), count_graph(trace.dynamo[0])["record_stream"]


@pytest.mark.parametrize("target", _TARGETS)
def test_a_tensor_read_through_an_object_is_kept_for_the_side_stream(target: str) -> None:
    off, kept = _run(target, "forward")
    assert off.abs().max() == 0
    assert kept == 1, "the object's one tensor, nothing else"


@pytest.mark.parametrize("target", _TARGETS)
def test_a_module_and_an_object_inside_the_object_are_not_walked(target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    torch.manual_seed(0)
    trace = trace_graph(
        code, target, lambda m: m.Caller("module"), (torch.randn(2, 3),), eager_first=target in ("cuda", "npugraph_ex")
    )
    assert count_graph(trace.dynamo[0])["record_stream"] == 1, "x alone: not the weights, nor the inner object"
