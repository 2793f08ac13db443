"""A call on an item of the object's module list writes what the element class's own method writes.

The element class is known (``codegen/index/elements.py``), and where it is a class of the module that defines
the method, the method's body decides (``item_calls.own_method_writes``), in a side body and on the caller's
stream alike: ``self.ds[0].prepare(x)`` copying into the item's ``buf`` writes ``self.ds`` (the caller's read of
``self.ds[0].buf`` waits), and ``Layer.forward`` running only an ``nn.Linear`` writes nothing, so a side call
reading ``self.layers[1].proj.weight`` keeps its overlap across ``self.layers[0](x)``. Before, such a method was
asked of the class's bases only, where ``nn.Module`` says nothing of ``forward``: every layer call wrote the whole
list, and the staging call lost its stream (no switch at all in ``staged``).
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


class Dispatcher(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(3))

    def prepare(self, h):
        self.buf.copy_(h @ torch.ones(3, 3) @ torch.ones(3, 3))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, h):
        return torch.relu(self.proj(h))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ds = nn.ModuleList([Dispatcher() for _ in range(2)])
        self.layers = nn.ModuleList(Layer() for _ in range(2))

    @on_stream("side")
    def fill(self, x):
        self.ds[0].prepare(x)
        return x * 2

    @on_stream("side")
    def stage(self, x):
        return x @ self.layers[1].proj.weight

    def filled(self, x):
        y = self.fill(x)
        w = x * 3
        b = self.ds[0].buf * 1
        return y + b + w

    def staged(self, x):
        y = self.stage(x)
        h = self.layers[0](x)
        return y + h
""" + caller_source()


def test_joined_before_the_item_state_is_read() -> None:
    body = method_source(generated(SOURCE), "filled")
    wait = body.index('runtime.wait("m.Model.fill.join")')
    assert body.index("w = x * 3") < wait < body.index("b = self.ds[0].buf * 1")


def test_a_layer_writing_nothing_keeps_the_overlap() -> None:
    body = method_source(generated(SOURCE), "staged")
    assert body.index("h = self.layers[0](x)") < body.index('runtime.wait("m.Model.stage.join")')


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["filled", "staged"])
def test_race_free_and_exact(method: str, target: str) -> None:
    x = torch.randn(3)
    want = eager_result(SOURCE, method, x, runs=2 if target in NATIVE else 1)
    assert sync_counts(generated(SOURCE, target), target, method, x, want)["switch"] == 1
