"""GE: a torch.nn layer a factory function of the run makes is a submodule whose call changes only itself.

``results`` hands ``third`` only what a call on another stream made (``a``), so its side call needs no fork edge
where no other work of the function changes the state the call reads (``self.w``): ``self.proj(x)`` changes only
``proj`` when ``proj`` is a layer (``codegen/lower/flow/ge_layers.py``, ``test_ge_inherited_layers.py``). With
``self.proj = make_proj()`` and ``def make_proj() -> nn.Linear: return nn.Linear(8, 8, bias=False)``, ``ge_layers``
read the name called, no layer, so the call was taken for a method that may change anything and the edge stayed
(``torchair.ops.record()`` and its wait, on main). The factory is read now (``factory_made.py``), in this file or in
another of the run; a factory ``__init__`` is handed (``def __init__(self, make_proj=make_proj)``) may make anything:
the edge stays. Race-checked and exact on GE against the portable target.
"""

from __future__ import annotations

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """
import torch
from torch import nn
from npudsl import on_stream


def make_proj() -> nn.Linear:
    return nn.Linear(8, 8, bias=False)


class M(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.on = True
        self.proj = BUILD
        self.register_buffer("w", torch.full((8,), 2.0))

    @on_stream("a", when="self.on")
    def first(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @on_stream("c", when="self.on")
    def third(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.w

    def results(self, x: torch.Tensor) -> torch.Tensor:
        a = self.first(x)
        h = self.proj(x)
        d = self.third(a)
        return d + h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.results(x)
"""

HANDED = ("def __init__(self) -> None:", "def __init__(self, make_proj=make_proj) -> None:")


def _code(build: str, target: str = "ge", handed: bool = False) -> str:
    source = SOURCE.replace("BUILD", build)
    return transform_source(source.replace(*HANDED) if handed else source, path="m.py", target=target)


def _edges(code: str) -> int:
    body = code[code.index("    def results(") : code.index("    def forward(")]
    return body.count("npu_wait_tensor") + body.count("torchair.ops.wait") + body.count("torchair.ops.record")


@pytest.mark.parametrize("build", ["make_proj()", "nn.Linear(8, 8, bias=False)"])
def test_a_layer_a_factory_makes_needs_no_edge(build: str) -> None:
    code = _code(build)
    assert "npu_stream_switch" in code and _edges(code) == 0  # on main: a record() and its wait for make_proj()


def test_a_handed_factory_keeps_the_edge() -> None:
    assert _edges(_code("make_proj()", handed=True)) >= 1


@pytest.mark.parametrize("handed", [False, True])
@pytest.mark.parametrize("build", ["make_proj()", "nn.Linear(8, 8, bias=False)"])
def test_race_free_and_exact(build: str, handed: bool) -> None:
    x = torch.randn(8, 8)
    model = lambda m: (torch.manual_seed(0), m.M())[1]  # noqa: E731  # one weight for both
    got = run_checked(_code(build, "ge", handed), "ge", model, (x,))
    want = run_checked(_code(build, "portable", handed), "portable", model, (x,))
    torch.testing.assert_close(got, want)
