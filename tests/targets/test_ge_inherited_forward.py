"""GE: a submodule whose class inherits ``forward`` from a base of the run is read through that base.

``return self.child_made(x)`` with ``class ChildMade(Made): pass`` and ``Made.forward(self, x) -> torch.Tensor:
return x * 2``: the index read ``ChildMade.forward`` only, found none, so the call's result was no certain tensor
and the event kept ``torchair.ops.record()`` on main. The chain is followed now for both facts GE needs: what
calling the submodule returns (``codegen/index/returns.py``) and whether its ``forward`` makes the value itself
(``called_function.py``, ``ge_made_by.py``); one without the other would have made ``self.child(x)``, whose
inherited ``Pass.forward`` returns ``x`` as it came, an ``out`` token ordering the waiter on the caller's ``x``
(the race ``test_ge_forward_made.py`` names). Both read ``codegen/lower/flow/inherited_forward.py``; a base in
another file counts where the run holds it, and alone the token stays.
"""

from __future__ import annotations

import pytest
import torch

from codegen.driver.api import transform_with_index
from codegen.index.index import build_index
from npudsl.testing.targets import run_checked
from targets_util import transform
from test_ge_forward_made import LAYERS, MODEL, _token

CHILDREN = """

class Child(Pass):
    pass


class ChildMade(Made):
    pass


class GrandMade(ChildMade):
    pass
"""

SUBMODULES = "\n        self.child = Child()\n        self.child_made = ChildMade()\n        self.grand = GrandMade()"
SOURCE = MODEL.replace("LAYERS", (LAYERS + CHILDREN).replace("import torch\n", "", 1)).replace(
    "self.skip = Pass()", "self.skip = Pass()" + SUBMODULES
)
TOKENS = {"self.child(x)": "torchair.ops.record()", "self.child_made(x)": "out", "self.grand(x)": "out"}


@pytest.mark.parametrize(("returned", "token"), TOKENS.items(), ids=["pass", "made", "grand"])
def test_an_inherited_forward_is_read(returned: str, token: str) -> None:
    assert _token(transform(SOURCE.replace("RETURNED", returned), "ge")) == token  # on main: record() for all


@pytest.mark.parametrize("returned", TOKENS)
def test_the_waiter_is_ordered_after_the_body(returned: str) -> None:
    """Only the waits the code states order anything (``data_edges="explicit"``)."""
    x = torch.randn(4, 4)
    code = transform(SOURCE.replace("RETURNED", returned), "ge")
    got = run_checked(code, "ge", lambda m: m.M(), (x.clone(),), data_edges="explicit")
    made = x if returned == "self.child(x)" else x * 2
    torch.testing.assert_close(got, made + 2, rtol=0, atol=0)


SPLIT = """
import torch
from npudsl import after, on_stream, records

from .layers import Made, Pass


class Doubled(Made):
    pass


class Passed(Pass):
    pass


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.doubled = Doubled()
        self.passed = Passed()

    @on_stream("side", sync="manual")
    @records("made")
    def made(self, x: torch.Tensor) -> torch.Tensor:
        return self.doubled(x)

    @on_stream("side", sync="manual")
    @records("kept")
    def kept(self, x: torch.Tensor) -> torch.Tensor:
        return self.passed(x)

    @after("made", "kept")
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
"""


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
def test_a_base_of_another_file(alone: bool) -> None:
    files = [("pkg.model", SPLIT)] if alone else [("pkg.layers", LAYERS), ("pkg.model", SPLIT)]
    index = build_index(files)
    code, _ = transform_with_index(SPLIT, path="model.py", module_name="pkg.model", index=index, target="ge")
    tokens = {e: _token(code, f"pkg.model.M.{e}") for e in ("made", "kept")}
    record = "torchair.ops.record()"
    assert tokens == {"made": record if alone else "out", "kept": record}
