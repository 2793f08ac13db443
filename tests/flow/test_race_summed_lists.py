"""A sum of two lists the function was given holds both lists' tensors (``summed_containers.py``).

``ys = xs + zs`` of two parameters (lists of tensors), or ``zs += xs``, makes a list of the same tensors. The
aliasing (``binding_aliases.py``) linked such a sum only where one operand was a container the function built,
so ``ys`` shared no memory with ``xs`` or ``zs``: a write through ``ys[0]`` after ``self.side(xs[0])`` ran while
the side stream still read it, and a side call given ``ys`` did not wait before the caller wrote ``zs[-1]``. Each
case raced on main on every event target. A sum whose every operand is a parameter that may be a container (not
annotated as a tensor or a scalar) or a container the function built is now read as joining containers; a sum of
locals the function binds otherwise (``m + c`` after ``m = x * 2``) stays new memory; a chain (``xs + zs + ws``,
``xs + zs + [b]``) holds what each of its operands holds.
"""

from __future__ import annotations

import ast

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import EVERY_TARGET, assert_race_free_and_exact

from codegen.driver.api import transform_source
from codegen.lower.flow.binding_aliases import binding_groups
from codegen.lower.flow.value_views import copied

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def side(self, t):
        return t * 2

    @on_stream("side")
    def side_sum(self, ts):
        return ts[0] * 2 + ts[-1]

    def concat_read(self, x):
        return self._concat_read([x * 1, x * 2], [x * 3, x * 4])

    def _concat_read(self, xs, zs):
        ys = xs + zs
        a = self.side_sum(ys)
        zs[-1].add_(1)
        c = xs[0].relu()
        return a + c

    def concat_write(self, x):
        return self._concat_write([x * 1, x * 2], [x * 3, x * 4])

    def _concat_write(self, xs, zs):
        a = self.side(xs[0])
        ys = xs + zs
        ys[0].add_(1)
        c = zs[0].relu()
        return a + c + ys[0]

    def chain_write(self, x):
        return self._chain_write([x * 1], [x * 2], x * 3)

    def _chain_write(self, xs, zs, b):
        a = self.side(zs[0])
        ys = xs + zs + [b]
        ys[1].add_(1)
        c = xs[0].relu()
        return a + c + ys[1]

    def aug_read(self, x):
        return self._aug_read([x * 1, x * 2], [x * 3, x * 4])

    def _aug_read(self, xs, zs):
        zs += xs
        a = self.side_sum(zs)
        xs[-1].add_(1)
        c = xs[0].relu()
        return a + c

    def aug_write(self, x):
        return self._aug_write([x * 1, x * 2], [x * 3, x * 4])

    def _aug_write(self, xs, zs):
        a = self.side(xs[-1])
        zs += xs
        zs[-1].add_(1)
        c = xs[0].relu()
        return a + c
""" + caller_source()

_RACED = ["concat_read", "concat_write", "chain_write", "aug_read", "aug_write"]


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("method", _RACED)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert_race_free_and_exact(SOURCE, target, method, torch.randn(3))


@pytest.mark.parametrize(("method", "write"), [("concat_write", "ys[0].add_(1)"), ("chain_write", "ys[1].add_(1)")])
def test_a_write_through_the_sum_waits(method: str, write: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), f"_{method}")
    assert body.index('runtime.wait("m.Model.side.join")') < body.index(write)


@pytest.mark.parametrize(
    ("source", "shared"),
    [
        ("def f(xs, zs):\n    ys = xs + zs\n", {"xs", "zs"}),
        ("def f(xs, zs, ws):\n    ys = xs + zs + ws\n", {"xs", "zs", "ws"}),
        ("def f(xs, zs):\n    ys = []\n    ys += xs\n    ys += zs\n", {"xs", "zs"}),
        ("def f(x: torch.Tensor, r: torch.Tensor):\n    h = x + r\n", set()),
        ("def f(x, n: int):\n    h = x + n\n", set()),
        ("def f(x):\n    m = x * 2\n    c = x * 0\n    h = m + c\n", set()),
    ],
)
def test_the_sum_holds_each_operand(source: str, shared: set[str]) -> None:
    fn = ast.parse(source).body[0]
    found = binding_groups(fn).get("ys", binding_groups(fn).get("h", frozenset()))
    assert found - {"ys", "h"} == shared


def test_a_copy_chain_holds_each_operand() -> None:
    """``xs + zs + [b]`` is read by the call results' aliasing (``result_aliases.py``) through ``copied``."""
    value = ast.parse("xs + zs + [b]", mode="eval").body
    parts = copied(value)
    assert parts is not None and [ast.unparse(p) for p in parts] == ["xs", "zs", "[b]"]
