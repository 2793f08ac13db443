"""What torch's function forms return and view is read by the ATen op they reach, whatever the path: an in-place
op of ``torch.nn.functional``, an unbound method of ``torch.Tensor`` (through an import alias too), an operator method.

``c = F.relu_(h)``, ``c = torch.Tensor.relu_(h)``, ``c = th.Tensor.relu_(h)`` and ``c = torch.Tensor.view(h, -1)``
bind ``c`` to ``h``'s memory, as ``c = torch.relu_(h)`` does: the result aliases (``result_aliases.py``,
``foreign_writes.foreign_results``) knew only ``torch.<op>``, so a side call given ``c`` did not wait before the
caller wrote ``h``. ``c = h.__imul__(1)`` is ``h`` too (``mul_``, ``aten_forms.py``). ``torch.narrow(h, 0, 0,
2).add_(1)`` and ``torch.select(h, 0, 1).mul_(3)`` write ``h``: the view's base was read as the module (``torch``),
as for a method the value it is called on (``view_roots.view_base``, now ``aten_forms.function_view``). Each
raced on main on every event target.
"""

from __future__ import annotations

import ast

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import EVERY_TARGET, assert_race_free_and_exact

from codegen.driver.api import transform_source
from codegen.lower.flow.aten_forms import aten_function, function_view
from codegen.lower.flow.view_roots import alias_root

_BOUND = {
    "functional": "c = F.relu_(h)",
    "unbound": "c = torch.Tensor.relu_(h)",
    "unbound_alias": "c = th.Tensor.relu_(h)",
    "unbound_view": "c = torch.Tensor.view(h, -1)",
    "operator": "c = h.__imul__(1)",
}
_WRITTEN = {"narrow": "torch.narrow(h, 0, 0, 2).add_(1)", "select": "torch.select(h, 0, 1).mul_(3)"}

_HEAD = """\
import torch
import torch as th
import torch.nn.functional as F
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def side(self, t):
        return t * 2

"""


def _bound(name: str, stmt: str) -> str:
    lines = ["h = x - 0.5", stmt, "a = self.side(c)", "d = x.sin()", "h.add_(1)", "return a + d + h"]
    return f"    def {name}(self, x):\n" + "".join(f"        {line}\n" for line in lines) + "\n"


def _written(name: str, stmt: str) -> str:
    lines = ["h = x - 0.5", "a = self.side(h)", "d = x.sin()", stmt, "return a + d + h"]
    return f"    def {name}(self, x):\n" + "".join(f"        {line}\n" for line in lines) + "\n"


SOURCE = (
    _HEAD
    + "".join(_bound(n, s) for n, s in _BOUND.items())
    + "".join(_written(n, s) for n, s in _WRITTEN.items())
    + caller_source()
)


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("method", [*_BOUND, *_WRITTEN])
def test_race_free_and_exact(method: str, target: str) -> None:
    assert_race_free_and_exact(SOURCE, target, method, torch.randn(3))


@pytest.mark.parametrize("method", [*_BOUND, *_WRITTEN])
def test_the_write_of_h_waits(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    write = "h.add_(1)" if method in _BOUND else _WRITTEN[method]
    assert body.index("d = x.sin()") < body.index('runtime.wait("m.Model.side.join")') < body.index(write)


@pytest.mark.parametrize(
    ("dotted", "op"),
    [
        (("torch", "relu_"), "relu_"),
        (("torch", "Tensor", "__iadd__"), "add_"),
        (("torch", "Tensor", "view"), "view"),
        (("torch", "nn", "functional", "relu_"), "relu_"),
        (("torch", "nn", "functional", "relu"), None),
        (("torch", "nn", "init", "zeros_"), None),
    ],
)
def test_the_op_a_path_runs(dotted: tuple[str, ...], op: str | None) -> None:
    assert aten_function(dotted) == op


@pytest.mark.parametrize(
    ("spelled", "root"),
    [
        ("torch.narrow(h, 0, 0, 2)", "h"),
        ("torch.Tensor.view(h, -1)", "h"),
        ("torch.select(input=h, dim=0, index=1)", "h"),
        ("torch.relu(h)", None),
        ("h.narrow(0, 0, 2)", "h"),
    ],
)
def test_a_function_form_view_is_its_first_argument(spelled: str, root: str | None) -> None:
    call = ast.parse(spelled, mode="eval").body
    assert isinstance(call, ast.Call)
    assert alias_root(call) == root
    assert (function_view(call) is not None) == (root is not None and spelled.startswith("torch"))
