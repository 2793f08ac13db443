"""A tensor's metadata handed to a function the run cannot read passes none of its memory.

transformers' MoE routers open ``maybe_autocast(device_type=device_type, ...)`` with ``device_type =
hidden_states.device.type``: a function outside the run may write what it is given (``foreign_writes.py``), but
``device_type`` is a string read off the tensor, not a view of it (``view_roots.alias_root`` stops at a metadata
attribute). Before, the local was taken for a view of ``hidden_states``, the router's call wrote it, and the shared
expert reading ``hidden_states`` on its stream was joined before the router: no overlap left in Ernie 4.5 MoE.
"""

from __future__ import annotations

import ast

import pytest

from codegen.driver.api import transform_source
from codegen.lower.flow.view_roots import alias_root, view_roots

SOURCE = """\
import torch
from torch import nn
from extlib import configure

from npudsl import on_stream


class Shared(nn.Module):
    @on_stream("side")
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.shared = Shared()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.shared(x)
        w = x * 3
        ARGUMENT
        z = x + 1
        return y + z + w
"""


def _forward(argument: str) -> str:
    code = transform_source(SOURCE.replace("ARGUMENT", argument), path="m.py", target="portable")
    return code[code.index("class Block") :]


@pytest.mark.parametrize(
    "argument",
    [
        "configure(x.device.type)",
        "device_type = x.device.type if isinstance(x.device.type, str) else 'cpu'\n        configure(device_type)",
        "configure(x.shape[0], dtype=x.dtype)",
    ],
)
def test_metadata_passes_no_memory(argument: str) -> None:
    body = _forward(argument)
    assert body.index("configure(") < body.index('runtime.wait("m.Shared.forward.join")')


@pytest.mark.parametrize("argument", ["configure(x)", "v = x[0]\n        configure(v)", "configure(x.T)"])
def test_the_tensor_itself_joins_first(argument: str) -> None:
    body = _forward(argument)
    assert body.index('runtime.wait("m.Shared.forward.join")') < body.index("configure(")


@pytest.mark.parametrize(
    ("expr", "root"),
    [("x.device.type", None), ("x.shape[0]", None), ("x.dtype", None), ("x[0].T", "x"), ("self.buf.data", "self")],
)
def test_alias_root(expr: str, root: str | None) -> None:
    assert alias_root(ast.parse(expr, mode="eval").body) == root


def test_a_local_of_metadata_views_nothing() -> None:
    fn = ast.parse("def f(x):\n    d = x.device.type\n    v = x[0]\n").body[0]
    assert isinstance(fn, ast.FunctionDef)
    roots = view_roots(fn, ("x",))
    assert "d" not in roots and roots["v"] == frozenset({"x"})
