"""Torch's function form of an in-place op writes its first argument, not the module it is reached through.

``torch.relu_(self.count)`` was read as writing ``torch`` (the object of the method ``relu_``, as ``h.relu_()``
writes ``h``), so ``writes.inplace_writes`` named ``{"torch"}``: a stream method whose body wrote state that way
through a local (``v = self.count`` then ``torch.relu_(v)``) was taken to write nothing of its object, and the
caller's read of ``self.count`` after the call did not wait for it (raced on main on every event target). The
tensor an in-place op writes is its ``self`` (``Tensor(a!) self`` in the ATen table, ``schema.py``): the first
argument of torch's function form (``written_exprs._receiver``). Written directly (``torch.relu_(self.count)``)
the body's write was already seen through its call (``call_state_writes.py``); it is now named by its spelling too.
"""

from __future__ import annotations

import ast

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import EVERY_TARGET, assert_race_free_and_exact

from codegen.driver.api import transform_source
from codegen.lower.flow.state_access import writes_state
from codegen.lower.flow.state_writes import state_writes
from codegen.lower.flow.writes import inplace_writes

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.tensor([-1.0, 2.0, -3.0]))

    @on_stream("side")
    def side_local(self, t):
        v = self.count
        torch.relu_(v)
        return t * 2

    @on_stream("side")
    def side_direct(self, t):
        torch.relu_(self.count)
        return t * 2

    def local(self, x):
        a = self.side_local(x)
        c = x.relu() + self.count
        return a + c

    def direct(self, x):
        a = self.side_direct(x)
        c = x.relu() + self.count
        return a + c
""" + caller_source()


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("method", ["local", "direct"])
def test_race_free_and_exact(method: str, target: str) -> None:
    assert_race_free_and_exact(
        SOURCE, target, method, torch.randn(3)
    )  # ``relu_`` of a relu'd buffer: the same each run


@pytest.mark.parametrize("method", ["local", "direct"])
def test_the_read_of_the_state_waits(method: str) -> None:
    body = method_source(_code(), method)
    assert body.index(f'runtime.wait("m.Model.side_{method}.join")') < body.index("self.count")


@pytest.mark.parametrize(
    ("spelled", "names", "chains"),
    [
        ("torch.relu_(self.count)", {"self"}, {"self.count"}),
        ("torch.relu_(x[0])", {"x"}, set()),
        ("torch.Tensor.add_(x, 1)", {"x"}, set()),
        ("torch.nn.init.zeros_(self.w)", {"self"}, {"self.w"}),
        ("torch.relu_(input=x)", {"x"}, set()),
        ("torch.cat(xs)", set(), set()),
        ("x.relu_()", {"x"}, set()),
    ],
)
def test_the_function_form_names_its_first_argument(spelled: str, names: set[str], chains: set[str]) -> None:
    stmt = ast.parse(spelled).body[0]
    assert inplace_writes(stmt) == names
    assert state_writes(stmt) == chains


def test_a_body_writing_state_by_the_function_form_names_it() -> None:
    fn = ast.parse("def side(self, t):\n    torch.relu_(self.count)\n    return t\n").body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert writes_state(fn, "self") == (frozenset({"count"}), frozenset({"count"}))
