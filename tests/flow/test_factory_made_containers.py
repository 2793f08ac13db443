"""Factories in containers and factories handed to a base: which class each element or submodule holds.

- ``self.layers = nn.ModuleList(make(d) for _ in range(n))`` (or ``[make(d) for _ in range(n)]``) with ``def make(d)
  -> Layer: return Layer()``: the index records the element class by the name called; ``for layer in self.layers:
  y = layer(x)`` reached no class on main and ran on the caller's stream. The loop's element is now read through
  ``class_in`` (``made_class_in.py``): ``Layer.forward`` on ``"side"``, joined where ``y`` is read.
- ``super().__init__(make)`` with the base storing ``self.f = f(d)`` from its parameter ``f``: the subclass hands a
  module-level factory, not a class or a ``lambda`` (``factory_submodules.py``); ``self.f(x)`` reached nothing on
  main. The factory is read as the class it makes (``class_chain.submodule_classes``).
- ``def make(): layer = Layer(); init(layer); return layer``: a local bound once to the class's call is what the
  factory returns (``factory_made.bound_value``).
- ``nn.ModuleList(make_layer() for _ in range(n))`` where ``make_layer`` is a parameter of ``__init__`` (``Bump``
  by default) shadowing the module's factory: no known class (``elements.py`` leaves out a call of a name
  ``__init__`` binds), so the loop's call stays on its caller's stream.

Every case runs race-checked and exact on the four event targets; a factory of two classes stays unknown.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


@on_stream("side")
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(1))

    def forward(self, x):
        return x * 2 * self.scale


class Other(nn.Module):
    def forward(self, x):
        return x * 2


class Bump(nn.Module):
    def forward(self, t):
        return t.mul_(2)


def init(layer: Layer) -> None:
    layer.scale.fill_(1.0)


def make(d: int) -> Layer:
    return Layer()


def bound(d: int) -> Layer:
    layer = Layer()
    init(layer)
    return layer


def make_layer() -> Layer:
    return Layer()


def either(d: int):
    if d > 2:
        return Layer()
    return Other()


class Base(nn.Module):
    def __init__(self, f, d: int):
        super().__init__()
        self.f = f(d)


class Model(Base):
    def __init__(self, d=3, n=2, make_layer=Bump):
        super().__init__(bound, d)
        self.shadowed = nn.ModuleList(make_layer() for _ in range(n))
        self.layers = nn.ModuleList(make(d) for _ in range(n))
        self.listed = [bound(d) for _ in range(n)]
        self.mixed = nn.ModuleList(either(d) for _ in range(n))

    def module_list(self, x):
        out = x
        for layer in self.layers:
            y = layer(x)
            z = x * 5
            out = out + y + z
        return out

    def plain_list(self, x):
        out = x
        for layer in self.listed:
            y = layer(x)
            z = x * 5
            out = out + y + z
        return out

    def mixed_list(self, x):
        out = x
        for layer in self.mixed:
            y = layer(x)
            z = x * 5
            out = out + y + z
        return out

    def shadowed_list(self, x):
        out = torch.zeros_like(x)
        for layer in self.shadowed:
            y = layer(x)
            z = x * 5
            out = out + y + z
        return out

    def handed(self, x):
        y = self.f(x)
        z = x * 5
        return x + y + z
""" + caller_source()

PLANNED = ["module_list", "plain_list", "handed"]
TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", PLANNED)
def test_the_call_is_planned_onto_its_stream(method: str) -> None:
    """Switched onto ``"side"``, the caller's ``z = x * 5`` between the call and its join (on main: no switch)."""
    body = _body(method)
    assert body.index('runtime.stream("side"') < body.index("y = ") < body.index("z = x * 5")
    assert body.index("z = x * 5") < body.index('runtime.wait("m.Layer.forward.join")')


@pytest.mark.parametrize("method", ["mixed_list", "shadowed_list"])
def test_an_element_of_no_known_class_stays_on_the_callers_stream(method: str) -> None:
    """A factory of two classes; a parameter of ``__init__`` (``make_layer=Bump``) that shadows the module's
    ``make_layer`` factory of ``Layer``: read as that factory, the loop would run ``Bump`` (which doubles its input in
    place) on ``"side"`` while the caller reads ``x``."""
    assert "runtime." not in _body(method)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", [*PLANNED, "mixed_list", "shadowed_list"])
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    got = run_checked(code, target, lambda m: m.Caller(method), (x.clone(),), eager_first=native)
    rounds = 1 if method == "handed" else 2
    want = x * 36 if method == "shadowed_list" else x + rounds * (x * 2 + x * 5)  # Bump: 2x + 10x, then 4x + 20x
    torch.testing.assert_close(got, want)
