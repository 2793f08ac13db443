"""A stream method called on the target of a loop over a layer list of the caller's object.

cann-recipes-infer's DeepSeek-R1 prefill walks ``for layer_id, decode_layer in enumerate(self.layers)`` and
calls ``decode_layer.forward_dispatch_double_routing(...)`` (the ``cann_r1_microbatch`` corpus entry). The
call reaches the method of the class every element of ``self.layers`` is made by in ``__init__``
(``nn.ModuleList(Layer(i) for i in ...)``, a list comprehension or display), when nothing else binds the loop
target. A list holding two classes, one the class grows (``append``), or a target bound again in the loop
keeps the call on its caller's stream: there ``Other.dispatch`` writes its input in place, which a call
planned as ``Layer.dispatch`` (which writes nothing) on a side stream would race with. Race-checked on every
case, exact against the same arithmetic, sync calls counted.
"""

from __future__ import annotations

import ast

import pytest
import torch

from bench.sync_count import count_graph, total
from codegen.driver.api import transform_source
from codegen.index.elements import element_classes
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Layer(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.scale = float(i + 2)

    @on_stream("comm")
    def dispatch(self, x):
        return x * self.scale


class Other(nn.Module):
    scale = 2.0

    def dispatch(self, x):
        return x.mul_(self.scale)


class Model(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.layers = nn.ModuleList(Layer(i) for i in range(2))
        self.listed = nn.ModuleList([Layer(0), Layer(1)])
        self.mixed = nn.ModuleList([Other(), Other()] if method == "mixed" else [Layer(0), Other()])
        self.grown = nn.ModuleList([Other(), Other()])
        self.method = method

    def grow(self):
        self.grown.append(Layer(2))

    def forward(self, x):
        x = x * 1
        if self.method == "walked":
            return self.walked(x)
        if self.method == "enumerated":
            return self.enumerated(x)
        if self.method == "mixed":
            return self.mixed_list(x)
        if self.method == "grown":
            return self.grown_list(x)
        return self.rebound(x)

    def walked(self, x):
        for layer in self.layers:
            y = layer.dispatch(x)
            z = x * x
            x = y + z
        return x

    def enumerated(self, x):
        for i, layer in enumerate(self.listed):
            y = layer.dispatch(x)
            z = x * x
            x = y + z + i
        return x

    def mixed_list(self, x):
        for layer in self.mixed:
            y = layer.dispatch(x)
            z = x * x
            x = y + z
        return x

    def grown_list(self, x):
        for layer in self.grown:
            y = layer.dispatch(x)
            z = x * x
            x = y + z
        return x

    def rebound(self, x):
        for layer in self.layers:
            layer = self.grown[0]
            y = layer.dispatch(x)
            z = x * x
            x = y + z
        return x
"""

STREAMED = ["walked", "enumerated"]
KEPT_ON_CALLER = ["mixed", "grown", "rebound"]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    for i, scale in enumerate((2.0, 3.0)):
        if method in KEPT_ON_CALLER:
            x = x * 2.0 + (x * 2.0) * (x * 2.0)  # Other.dispatch doubles x in place before ``x * x`` reads it
        else:
            x = x * scale + x * x + (i if method == "enumerated" else 0)
    return x


@pytest.mark.parametrize("method", STREAMED + KEPT_ON_CALLER)
def test_race_free_exact_and_streamed_only_for_one_class(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(3, 4)
    trace = trace_graph(code, "portable", lambda m: m.Model(method), (x,), name=f"loop_{method}")
    torch.testing.assert_close(trace.outputs, _want(method, x))
    calls = total(count_graph(trace.dynamo[0]))
    assert calls == (12 if method in STREAMED else 0)  # per layer: fork, switch, wait, keep x, join, wait


def _lists(source: str) -> dict[str, str]:
    cls = ast.parse(source).body[0]
    assert isinstance(cls, ast.ClassDef)
    return element_classes(cls)


def test_the_element_class_is_read_from_init_only_when_sure() -> None:
    source = """\
class M:
    def __init__(self, n):
        self.gen = nn.ModuleList(Layer(i) for i in range(n))
        self.comp = [Layer(i) for i in range(n)]
        self.shown = torch.nn.ModuleList([Layer(0), Layer(1)])
        self.two = nn.ModuleList([Layer(0), Other()])
        self.grown = nn.ModuleList([Layer(0)])
        self.swapped = nn.ModuleList([Layer(0)])
        self.moved = nn.ModuleList([Layer(0)])
        self.plain = Layer(0)
        self.unknown = nn.ModuleList(make_layers(n))

    def more(self):
        self.grown.append(Other())
        self.swapped[0] = Other()
        self.moved = nn.ModuleList([Other()])
"""
    assert _lists(source) == {"gen": "Layer", "comp": "Layer", "shown": "Layer"}
