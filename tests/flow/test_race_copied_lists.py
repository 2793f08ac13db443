"""``ys = xs`` then ``ys += zs`` extends the one list both names hold (``list.__iadd__`` changes it in place).

The aliasing (``binding_aliases.py``) gave only ``ys`` the tensors ``zs`` holds, and read ``ys`` as no container at
all where ``xs`` was a parameter (a name bound to another is not a parameter that may be a container): a write
through ``xs[2]`` (``zs[0]``'s tensor) ran while a side call still read ``zs[0]``, and a side call given ``xs`` did not
wait before the caller wrote ``zs[-1]``. Both raced on main on every event target. A reference copy of a name that
may be a container may be one too, and what the augmented name takes in, each name it is a copy of holds as well
(``summed_containers.reference_copies``).
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
from codegen.lower.flow.summed_containers import reference_copies

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

    def copy_write(self, x):
        return self._copy_write([x * 1, x * 2], [x * 3, x * 4])

    def _copy_write(self, xs, zs):
        a = self.side(zs[0])
        ys = xs
        ys += zs
        xs[2].add_(1)
        c = xs[0].relu()
        return a + c

    def copy_read(self, x):
        return self._copy_read([x * 1, x * 2], [x * 3, x * 4])

    def _copy_read(self, xs, zs):
        ys = xs
        ys += zs
        a = self.side_sum(xs)
        c = xs[0].relu()
        zs[-1].add_(1)
        return a + c
""" + caller_source()

_RACED = ["copy_write", "copy_read"]


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("method", _RACED)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert_race_free_and_exact(SOURCE, target, method, torch.randn(3))


@pytest.mark.parametrize(("method", "write"), [("copy_write", "xs[2].add_(1)"), ("copy_read", "zs[-1].add_(1)")])
def test_the_write_waits(method: str, write: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), f"_{method}")
    wait = "side" if method == "copy_write" else "side_sum"
    assert body.index(f'runtime.wait("m.Model.{wait}.join")') < body.index(write)


@pytest.mark.parametrize(
    ("source", "name", "shared"),
    [
        ("def f(xs, zs):\n    ys = xs\n    ys += zs\n", "xs", {"ys", "zs"}),
        ("def f(xs, zs):\n    ys = xs\n    ws = ys\n    ws += zs\n", "xs", {"ys", "ws", "zs"}),
        ("def f(xs, zs):\n    ys = xs\n    ys += zs\n", "zs", {"ys", "xs"}),
        ("def f(x: torch.Tensor, r: torch.Tensor):\n    h = x\n    h += r\n", "r", set()),
    ],
)
def test_the_copied_list_holds_what_is_added(source: str, name: str, shared: set[str]) -> None:
    fn = ast.parse(source).body[0]
    assert binding_groups(fn).get(name, frozenset()) - {name} == shared


def test_reference_copies_follow_each_step() -> None:
    fn = ast.parse("def f(a):\n    c = b\n    b = a\n    d = c.view(-1)\n").body[0]
    assert reference_copies(fn) == {"c": frozenset({"a", "b"}), "b": frozenset({"a"})}
