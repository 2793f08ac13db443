"""A join covers a call on its stream only where that call's last fork came before the join's record, on every path.

``side_b`` and ``side_a`` on stream ``s``; in a loop ``side_a`` forks after the ``side_b`` of an earlier iteration,
so a wait for ``side_a.join`` orders that ``side_b`` too (it covers it). Under an ``if`` the caller joins ``side_a``
and forks ``side_b`` again: there the last ``side_b`` runs after ``side_a``'s record. Where the paths met, the state
kept the cover of the other path, so the next wait for ``side_a.join`` counted ``side_b`` joined and the read of
``b`` after the loop waited for nothing (a race on every target but GE, which orders by data). Other loop shapes
(the read in the next iteration, ``break``, ``continue``, an ``if`` around the loop) are probed too: race-free and
exact on every target, both ways through the branch.
"""

from __future__ import annotations

import types

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

HEAD = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, again, n):
        super().__init__()
        self.again = again
        self.n = n

    @on_stream("s")
    def side_b(self, x):
        return x * 2

    @on_stream("s")
    def side_a(self, x):
        return x + 5

    def forward(self, x):
        h = x * 1
        b = x
        z = x
"""

RACED = {  # raced on main: ``b`` read after the loop with no wait for the last ``side_b``
    "for": """\
        for i in range(self.n):
            a = self.side_a(h)
            if self.again and i % 2 == 0:
                h = h * 3
                h = h + a
                b = self.side_b(h)
            z = z + a
        return z + b
""",
    "while": """\
        i = 0
        while i < self.n:
            a = self.side_a(h)
            if self.again and i % 2 == 0:
                h = h * 3
                h = h + a
                b = self.side_b(h)
            z = z + a
            i += 1
        return z + b
""",
    "else": """\
        for i in range(self.n):
            a = self.side_a(h)
            if self.again and i % 2 == 0:
                h = h * 3
                h = h + a
                b = self.side_b(h)
            else:
                h = h * 2
            z = z + a
        return z + b
""",
    "inner_loop": """\
        for i in range(self.n):
            a = self.side_a(h)
            if self.again:
                h = h * 3
                h = h + a
                for j in range(2):
                    b = self.side_b(h)
            z = z + a
        return z + b
""",
}

PROBED = {  # race-free on main too
    "next_iteration": """\
        for i in range(self.n):
            z = z + b
            a = self.side_a(h)
            if self.again and i % 2 == 0:
                h = h * 3
                h = h + a
                b = self.side_b(h)
            z = z + a
        return z
""",
    "break_in_if": """\
        for i in range(self.n):
            a = self.side_a(h)
            if self.again and i == 1:
                h = h * 3
                h = h + a
                b = self.side_b(h)
                break
            z = z + a
        return z + a + b
""",
    "continue_in_if": """\
        for i in range(self.n):
            a = self.side_a(h)
            if self.again and i % 2 == 0:
                h = h * 3
                h = h + a
                b = self.side_b(h)
                continue
            z = z + a
        return z + b
""",
    "break_after_if": """\
        for i in range(self.n):
            a = self.side_a(h)
            if self.again and i % 2 == 0:
                h = h * 3
                h = h + a
                b = self.side_b(h)
            z = z + a
            if i == 1:
                break
        return z + b
""",
    "while_true_break": """\
        i = 0
        while True:
            a = self.side_a(h)
            if self.again and i % 2 == 0:
                h = h * 3
                h = h + a
                b = self.side_b(h)
            z = z + a
            i += 1
            if i >= self.n:
                break
        return z + b
""",
    "if_around_loop": """\
        b = self.side_b(h)
        if self.again:
            for i in range(self.n):
                a = self.side_a(h)
                h = h * 3
                h = h + a
                b = self.side_b(h)
                z = z + a
        return z + b
""",
}

_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]


def _eager(source: str, again: bool, x: torch.Tensor) -> torch.Tensor:
    """The decorated source run as written (the decorators keep their meaning in eager mode)."""
    module = types.ModuleType("loop_covers_eager")
    exec(compile(source, "<loop_covers_eager>", "exec"), module.__dict__)  # noqa: S102 (the code under test)
    return module.Model(again, 3)(x)  # type: ignore[no-any-return]


def _check(body: str, target: str, again: bool) -> None:
    source = HEAD + body
    x = torch.randn(2, 3)
    code = transform_source(source, path="m.py", target=target)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = trace_graph(code, target, lambda m: m.Model(again, 3), (x,), eager_first=native).outputs
    torch.testing.assert_close(got, _eager(source, again, x))


@pytest.mark.parametrize("again", [False, True])
@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("shape", sorted(RACED))
def test_race_free_and_exact(shape: str, target: str, again: bool) -> None:
    _check(RACED[shape], target, again)


@pytest.mark.parametrize("again", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("shape", sorted(PROBED))
def test_probes_race_free_and_exact(shape: str, target: str, again: bool) -> None:
    _check(PROBED[shape], target, again)


@pytest.mark.parametrize("shape", sorted(RACED))
def test_the_read_after_the_loop_waits_for_the_last_side_b(shape: str) -> None:
    """One wait for ``side_b.join``, under the flag its fork sets, just before the return reads ``b``."""
    code = transform_source(HEAD + RACED[shape], path="m.py", target="portable")
    lines = [line.strip() for line in method_source(code, "forward").splitlines()]
    end = lines.index("return z + b")
    assert lines[end - 2 : end] == ["if side_b_forked:", 'runtime.wait("m.Model.side_b.join")']
    assert lines.count('runtime.wait("m.Model.side_b.join")') == 1
