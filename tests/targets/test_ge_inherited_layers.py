"""GE: a torch.nn layer that a base class's ``__init__`` assigns is a submodule whose call changes only itself.

``results`` below hands ``third`` only what a call on another stream made (``a``), so its side call needs no fork
edge where no other work of the function changes the state the call reads (``self.w``): ``self.proj(x)`` changes
only ``proj`` when ``proj`` is a layer (``codegen/lower/flow/ge_layers.py``). That was read in the class's own
``__init__`` only, so with the weights in a base class (as vLLM-style models split them: ``class
MLA(MLAWeights)``) the call was taken for a method that may change anything, and the edge stayed
(``torchair.ops.record()`` and a wait, on main). The base counts now in this file and in another file of the run;
transformed alone, the other file's base is unknown and the edge stays. A subclass that stores the attribute
itself (``self.proj = self.proj``) keeps it.
"""

from __future__ import annotations

import pytest
import torch

from codegen.driver.api import transform_with_index
from codegen.index.index import build_index
from npudsl.testing.targets import run_checked
from targets_util import transform

WEIGHTS = """
import torch


class Weights(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.on = True
        self.proj = torch.nn.Linear(8, 8, bias=False)
        self.register_buffer("w", torch.full((8,), 2.0))
"""

MODEL = """
import torch
from npudsl import on_stream
IMPORT

class M(Weights):
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

SAME = MODEL.replace("IMPORT\n", WEIGHTS.replace("import torch\n", "", 1))
OTHER = MODEL.replace("IMPORT", "from .weights import Weights\n")


def _edges(code: str) -> int:
    body = code[code.index("    def results(") : code.index("    def forward(")]
    return body.count("npu_wait_tensor") + body.count("torchair.ops.wait") + body.count("torchair.ops.record")


def _split(alone: bool) -> str:
    files = [("pkg.model", OTHER)] if alone else [("pkg.weights", WEIGHTS), ("pkg.model", OTHER)]
    index = build_index(files)
    code, _ = transform_with_index(OTHER, path="model.py", module_name="pkg.model", index=index, target="ge")
    return code


def test_a_layer_of_a_base_in_this_file_needs_no_edge() -> None:
    code = transform(SAME, "ge")
    assert "npu_stream_switch" in code and _edges(code) == 0, code  # on main: a record() and its wait


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
def test_a_layer_of_a_base_in_another_file(alone: bool) -> None:
    assert _edges(_split(alone)) == (2 if alone else 0)  # record() and its wait; on main: together too


def test_a_subclass_storing_the_attribute_keeps_the_edge() -> None:
    first = "        a = self.first(x)\n"
    source = SAME.replace(first, "        self.proj = self.proj\n" + first, 1)
    assert _edges(transform(source, "ge")) >= 1


def test_race_free_and_exact() -> None:
    x = torch.randn(8, 8)
    model = lambda m: (torch.manual_seed(0), m.M())[1]  # noqa: E731  # one weight for both
    got = run_checked(transform(SAME, "ge"), "ge", model, (x,))
    want = run_checked(transform(SAME, "portable"), "portable", model, (x,))
    torch.testing.assert_close(got, want)
