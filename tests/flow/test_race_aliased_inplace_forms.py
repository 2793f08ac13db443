"""An in-place op writes what its ATen schema says however it is spelled: through an import alias of torch, a name
imported from it, ``torch.nn.functional``, the unbound method, or Python's in-place operator method.

A stream method's body writing its object's state through a local (``v = self.count``) by ``th.relu_(v)``
(``import torch as th``), ``relu_(v)`` (``from torch import relu_``), ``F.relu_(v)`` or ``th.Tensor.add_(v, 1)``
was taken to write nothing of its object: the spelling (``written_exprs.py``) knows torch only as ``torch`` and
named ``th`` written, and the calls the run resolves through the module's imports (``imported_writes.py``) were
asked only of the chains a call is given directly. The caller's read of ``self.count`` after the call did not
wait (raced on main on every event target). Now each argument a resolved call writes that holds state through a
local writes that state (``held_state_calls.py``). ``x.__iadd__(1)`` (``self.count.__iadd__(1)``, a parameter,
a local holding state, the caller's own tensor) is ``x += 1``: torch binds it to ``add_``
(``aten_forms.py``), whose schema writes ``self``; it was read as a method writing nothing.
"""

from __future__ import annotations

import ast

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import EVERY_TARGET, assert_race_free_and_exact

from codegen.driver.api import transform_source
from codegen.lower.flow.writes import inplace_writes
from codegen.lower.flow.written_exprs import writes_in_place

_SIDES = {  # a stream method's body writing ``self.count``, or its parameter, by each spelling
    "state_th": "v = self.count\n        th.relu_(v)",
    "state_functional": "v = self.count\n        F.relu_(v)",
    "state_imported": "v = self.count\n        relu_(v)",
    "state_imported_as": "v = self.count\n        r_(v)",
    "state_unbound_th": "v = self.count\n        th.Tensor.add_(v, 1)",
    "state_iadd": "self.count.__iadd__(1)",
    "state_iadd_local": "v = self.count\n        v.__iadd__(1)",
    "param_iadd": "t.__iadd__(1)",
}

_HEAD = """\
import torch
import torch as th
import torch.nn.functional as F
from torch import nn, relu_
from torch import relu_ as r_
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.tensor([-1.0, 2.0, -3.0]))

    @on_stream("side")
    def reader(self, t):
        return t * 2

"""


def _side(name: str, body: str) -> str:
    caller = (
        "        h = x - 0.5\n        a = self.side_{0}(h)\n        c = h.sin()\n        return a + c\n"
        if name.startswith("param")
        else "        a = self.side_{0}(x)\n        c = x.relu() + self.count\n        return a + c\n"
    )
    side = f'    @on_stream("side")\n    def side_{name}(self, t):\n        {body}\n        return t * 2\n\n'
    return side + f"    def {name}(self, x):\n" + caller.format(name) + "\n"


_CALLER_IADD = """\
    def caller_iadd(self, x):
        h = x - 0.5
        a = self.reader(h)
        c = x.sin()
        h.__iadd__(1)
        return a + c + h
"""

SOURCE = _HEAD + "".join(_side(n, b) for n, b in _SIDES.items()) + _CALLER_IADD + caller_source()
_RACED = [*_SIDES, "caller_iadd"]


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("method", _RACED)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert_race_free_and_exact(SOURCE, target, method, torch.randn(3))


@pytest.mark.parametrize("method", [m for m in _SIDES if m.startswith("state")])
def test_the_read_of_the_state_waits(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert body.index(f'runtime.wait("m.Model.side_{method}.join")') < body.index("self.count")


def test_the_callers_iadd_waits_for_the_reader() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "caller_iadd")
    assert body.index("c = x.sin()") < body.index('runtime.wait("m.Model.reader.join")') < body.index("h.__iadd__")


@pytest.mark.parametrize(
    ("spelled", "names"),
    [
        ("h.__iadd__(1)", {"h"}),
        ("h[0].__imul__(2)", {"h"}),
        ("torch.Tensor.__isub__(h, 1)", {"h"}),
        ("h.__iand__(m)", {"h"}),
        ("h.__add__(1)", set()),
        ("h.add(1)", set()),
    ],
)
def test_an_operator_method_writes_as_its_op(spelled: str, names: set[str]) -> None:
    assert inplace_writes(ast.parse(spelled).body[0]) == names


def test_operator_methods_read_the_schema_of_their_op() -> None:
    assert writes_in_place("__iadd__") and writes_in_place("__itruediv__") and writes_in_place("__ipow__")
    assert not writes_in_place("__add__") and not writes_in_place("__radd__")
