"""GE: a torch layer a base class's ``__init__`` or a factory function of the run makes is read as one made directly.

``return self.lin(x)`` in a recording body, ``self.lin = make_linear()`` with ``def make_linear() -> nn.Linear: return
nn.Linear(4, 4)``, or ``self.based_lin = nn.Linear(4, 4)`` in a base's ``__init__`` (``super().__init__()``): the
tensor the layer returns is made by the body, so it is the event's token (``out``), as for ``self.dlin = nn.Linear(4,
4)`` in the class's own ``__init__``. ``local_returns._layers`` read only the class's own ``__init__`` and the name it
called, so on main both kept ``torchair.ops.record()`` (a token that orders the waiter after nothing of the body's
own; no race, a missing token). The pass-through layer (``nn.Identity``, ``ge_made_by._layer_of``) is read the same
way, so a factory's or a base's ``Identity`` still keeps ``record()``: its ``out`` would be the caller's ``x``.
Every case runs with only the waits the code states (``data_edges="explicit"``), race-checked and exact.
"""

from __future__ import annotations

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """
import torch
from torch import nn
from npudsl import after, on_stream, records


def make_identity() -> nn.Identity:
    return nn.Identity()


def eye(layer: nn.Linear) -> None:
    nn.init.eye_(layer.weight)
    nn.init.zeros_(layer.bias)


def make_linear() -> nn.Linear:
    layer = nn.Linear(4, 4)
    eye(layer)
    return layer


class Base(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.based = nn.Identity()
        self.based_lin = nn.Linear(4, 4)


class M(Base):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("buf", torch.ones(4, 4))
        self.skip = make_identity()
        self.direct = nn.Identity()
        self.lin = make_linear()
        self.dlin = nn.Linear(4, 4)
        eye(self.dlin)
        eye(self.based_lin)

    @on_stream("side", sync="manual")
    @records("e")
    def f(self, x: torch.Tensor) -> torch.Tensor:
        self.buf.mul_(2)
        return RETURNED

    @after("e")
    def g(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(4, 4) + self.buf

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.f(x)
        return self.g(y)
"""

MADE = ["self.lin(x)", "self.based_lin(x)", "self.dlin(x)"]
PASSED = ["self.skip(x)", "self.based(x)", "self.direct(x)"]
_RECORD = "torchair.ops.record()"


def transform(source: str, target: str) -> str:
    return transform_source(source, path="m.py", target=target)


def _token(code: str) -> str:
    line = next(x for x in code.splitlines() if '["m.M.e"] = ' in x and "_EVENT_TOKEN" in x)
    return line.split(" = ", 1)[1]


@pytest.mark.parametrize("returned", MADE)
def test_a_layer_making_its_value_is_the_token(returned: str) -> None:
    assert _token(transform(SOURCE.replace("RETURNED", returned), "ge")) == "out"  # on main: record(), but dlin


@pytest.mark.parametrize("returned", PASSED)
def test_a_layer_returning_its_input_is_no_token(returned: str) -> None:
    assert _token(transform(SOURCE.replace("RETURNED", returned), "ge")) == _RECORD


@pytest.mark.parametrize("returned", [*MADE, *PASSED])
def test_the_waiter_is_ordered_after_the_body(returned: str) -> None:
    """Only the waits the code states order anything (``data_edges="explicit"``); every layer returns ``x`` (the
    linear ones hold the identity), the body doubles the buffer."""
    x = torch.randn(4, 4)
    code = transform(SOURCE.replace("RETURNED", returned), "ge")
    with torch.no_grad():
        got = run_checked(code, "ge", lambda m: m.M(), (x.clone(),), data_edges="explicit")
    torch.testing.assert_close(got, x + 2, rtol=0, atol=0)
