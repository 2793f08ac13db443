"""An ATen op called by its overload writes what that overload's schema says, not every argument.

``torch.ops.aten.add.Tensor(self.buf, x)`` was looked up by its overload's name (``Tensor``), which no op has, and
so taken to write every argument: a pending side call reading ``self.buf`` was joined before it, for nothing.
The overload's schema (``aten_overload_table.py``, rebuilt here from the pinned torch) says ``add.Tensor`` writes
nothing, ``mul_.Scalar`` its ``self``, ``add.out`` its ``out=``, ``sort.values`` its ``values=`` and
``indices=``; an op the table lacks still writes every argument. The generated code keeps the overlap, race-free
and exact. ``sort.values`` was looked up as the op ``values`` (which writes nothing): its write of ``values=`` raced
a side call reading that tensor; it waits now.
"""

from __future__ import annotations

import ast

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.aten_overload_build import TABLE, build
from codegen.lower.flow.foreign_writes import foreign_writes
from npudsl.testing.targets import run_checked


def test_the_table_is_rebuilt_from_torch_unchanged() -> None:
    assert TABLE.read_text(encoding="utf-8") == build(), "run: python -m codegen.lower.flow.aten_overload_build"


@pytest.mark.parametrize(
    ("call", "written"),
    [
        ("torch.ops.aten.mul_.Scalar(x, 2)", {"x"}),
        ("torch.ops.aten.add.Tensor(x, y)", set()),
        ("torch.ops.aten.relu.default(x)", set()),
        ("torch.ops.aten.add.out(x, y, out=z)", {"z"}),
        ("torch.ops.aten.sort.values(x, values=v, indices=i)", {"v", "i"}),
        ("torch.ops.aten.index_put_.default(x, [i], y)", {"x"}),
        ("torch.ops.aten.mul_(x, 2)", {"x"}),  # no overload named: what some overload writes
        ("torch.ops.aten.mul_.Scalar(*xs)", {"xs"}),  # spread: which parameter each takes is not read
        ("torch.ops.aten.no_such_op.default(x, y)", {"x", "y"}),  # unknown: every argument
    ],
)
def test_writes_by_the_overload(call: str, written: set[str]) -> None:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    dotted = tuple(ast.unparse(node.func).split("."))
    assert foreign_writes(node, dotted) == written


SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), 2.0))
        self.register_buffer("vals", torch.full((2, 3), 2.0))
        self.register_buffer("idx", torch.zeros((2, 3), dtype=torch.long))

    @on_stream("side")
    def side(self, x):
        return x * self.buf

    @on_stream("side")
    def side_vals(self, x):
        return x * self.vals

    def sort_into(self, x):
        y = self.side_vals(x)
        z = x * 5
        torch.ops.aten.sort.values(x, values=self.vals, indices=self.idx)
        self.vals.fill_(2.0)
        return y + z

    def reads(self, x):
        y = self.side(x)
        z = torch.ops.aten.add.Tensor(self.buf, x)
        return y + z

    def writes(self, x):
        y = self.side(x)
        z = x * 5
        torch.ops.aten.mul_.Scalar(self.buf, 2)
        self.buf.div_(2)
        return y + z
""" + caller_source()


def test_a_reading_overload_keeps_the_overlap() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "reads")
    assert body.index('runtime.stream("side"') < body.index("z = torch.ops.aten.add") < body.rindex("runtime.wait(")


@pytest.mark.parametrize(("method", "write"), [("writes", "torch.ops.aten.mul_"), ("sort_into", "torch.ops.aten.sort")])
def test_a_writing_overload_waits(method: str, write: str) -> None:
    """``sort.values`` writes its ``values=`` and ``indices=``: before, looked up as the op ``values`` (which writes
    nothing), it ran while the side call still read ``self.vals`` (the race checker found it)."""
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    before = body[: body.index(write)]
    assert 'runtime.stream("side"' in before
    assert before.count("runtime.record(") <= before.count("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize(
    ("method", "want"),
    [("reads", lambda x: x * 2 + (2 + x)), ("writes", lambda x: x * 2 + x * 5), ("sort_into", lambda x: x * 2 + x * 5)],
)
def test_race_free_and_exact(method: str, want: object, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, want(x), rtol=0, atol=0)  # type: ignore[operator]
