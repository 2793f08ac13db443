"""A guard read through a layer loop's target that every layer holds equal forks every layer's call alike.

``codegen/lower/flow/uniform_guards.py``: ``for layer in self.layers: y = layer.side(h)`` with ``when="self.on"``
reads the guard on another layer in every iteration. When the model builds every layer passing one value
(``Layer(i, on)`` for each ``i``, ``on`` a parameter of its ``__init__``) and the layer stores it once as
``self.on``, the layers agree: the previous layer's call is no longer joined before the next one forks
(cann_r1_microbatch's combine of micro-batch 1). Built with a value per layer (``Layer(i, i % 2 == 0)``), a layer
that does not fork would leave the earlier call unjoined: the wait stays. Race-checked and exact both ways.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Layer(nn.Module):
    def __init__(self, i, on):
        super().__init__()
        self.i, self.on = i, on

    @on_stream("s", when="self.on")
    def side(self, x):
        return x * 2 + self.i


class Model(nn.Module):
    def __init__(self, n, on):
        super().__init__()
        self.layers = nn.ModuleList(Layer(i, ARG) for i in range(n))

    def forward(self, x):
        out = x
        y = x
        for layer in self.layers:
            h = out + 1
            y = layer.side(h)
            out = out * 3
        return out + y
"""
WAIT = 'runtime.wait("m.Layer.side.join")'


def _code(arg: str, target: str = "portable") -> str:
    return transform_source(SOURCE.replace("ARG", arg), path="m.py", target=target)


def _loop(code: str) -> list[str]:
    lines = [line.strip() for line in method_source(code, "forward").splitlines()]
    return lines[lines.index("for layer in self.layers:") : lines.index("out = out * 3")]


def test_layers_built_with_one_value_need_no_wait_before_the_next_fork() -> None:
    assert WAIT not in _loop(_code("on"))


@pytest.mark.parametrize("arg", ["i % 2 == 0", "on and i > 0"])
def test_a_value_per_layer_keeps_the_wait(arg: str) -> None:
    assert WAIT in _loop(_code(arg))


@pytest.mark.parametrize("change", ["self.layers[0].on = False", "setattr(self.layers[0], 'on', False)"])
def test_an_owner_changing_a_layer_keeps_the_wait(change: str) -> None:
    built = "self.layers = nn.ModuleList(Layer(i, on) for i in range(n))"
    code = transform_source(SOURCE.replace("ARG", "on").replace(built, f"{built}\n        {change}"), path="m.py")
    assert "torch.ops.air.tagged_event_wait(_SIDE_JOIN)" in "\n".join(_loop(code))


def _want(x: torch.Tensor, n: int) -> torch.Tensor:
    out = y = x
    for i in range(n):
        y = (out + 1) * 2 + i
        out = out * 3
    return out + y


@pytest.mark.parametrize("on", [False, True])
@pytest.mark.parametrize("arg", ["on", "i % 2 == 0"])
@pytest.mark.parametrize("target", ["portable", "cuda"])
def test_race_free_and_exact(target: str, arg: str, on: bool) -> None:
    x = torch.randn(2, 3)
    got = trace_graph(_code(arg, target), target, lambda m: m.Model(3, on), (x,), eager_first=target == "cuda")
    torch.testing.assert_close(got.outputs, _want(x, 3))
