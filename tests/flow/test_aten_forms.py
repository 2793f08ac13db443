"""``aten_forms.DUNDER_OPS`` is what the pinned torch runs: each in-place operator method of ``torch.Tensor``
dispatches the ATen op the table names (recorded under a dispatch mode), and every such method is either in the
table or an ATen op whose schema writes ``self`` under its own name (``aten_table.py``)."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from codegen.lower.flow import schema
from codegen.lower.flow.aten_forms import DUNDER_OPS

_OPERATORS = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "div", "mod", "pow")
_BITWISE = ("and", "or", "xor", "lshift", "rshift")


class _Ops(TorchDispatchMode):
    """The ATen ops run under it, by name."""

    def __init__(self) -> None:
        super().__init__()
        self.ran: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.ran.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("method", sorted(DUNDER_OPS))
def test_each_method_runs_its_op(method: str) -> None:
    x = torch.ones(3)
    with _Ops() as ops:
        getattr(torch.Tensor, method)(x, 2)
    assert ops.ran == [DUNDER_OPS[method]]
    assert schema.writes_self(DUNDER_OPS[method])


def test_every_inplace_operator_method_is_known() -> None:
    methods = [f"__i{op}__" for op in (*_OPERATORS, *_BITWISE) if hasattr(torch.Tensor, f"__i{op}__")]
    unknown = [m for m in methods if m not in DUNDER_OPS and not schema.writes_self(m)]
    assert not unknown
