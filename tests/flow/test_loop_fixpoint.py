"""A loop's head state is a fixed point that only grows, and a loop that does not settle joins everything each lap.

``z = z + w``, ``w = v``, ``v = u``, ``u = self.side(x)``: a result is read three iterations after its call, once
the copies carried it to ``w``. The head iterates used to be recomputed from the entry alone, so the join at
``z = z + w`` shrank them again: they cycled ({u}, {u, v}, {u, v, w}, ...) and the 20th, which the body was then
recorded from, held ``{u, v}``: the read of ``w`` waited for nothing (a race on every target but GE, which orders by
data). Each iterate now merges the last, so the head settles on ``{u, v, w}`` (``loop_fixpoint._head``).

Where the head does not settle within ``_LOOP_LIMIT`` iterations (forced here with a limit of 1), the loop joins
every pending call before it, at the end of its body and before each ``continue`` (``_unsettled``): race-free and
exact on every target, both ways through the branches, in ``for``, ``while``, ``continue`` and ``else`` shapes.
"""

from __future__ import annotations

import types

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow import loop_fixpoint
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
    def side(self, x):
        return x * 2

    def forward(self, x):
        u = x * 1
        v = x * 3
        w = x * 5
        z = x * 0
"""

SHAPES = {
    "shift": """\
        for i in range(self.n):
            z = z + w
            w = v
            v = u
            u = self.side(x + i)
        return z
""",
    "shift_work": """\
        for i in range(self.n):
            z = z + w
            w = v
            v = u
            u = self.side(x + i)
            z = z * 2
        return z + u
""",
    "while": """\
        i = 0
        while i < self.n:
            z = z + w
            w = v
            v = u
            u = self.side(x + i)
            z = z * 2
            i += 1
        return z + v
""",
    "continue": """\
        for i in range(self.n):
            z = z + w
            w = v
            v = u
            u = self.side(x + i)
            if self.again and i % 2 == 0:
                z = z - 1
                continue
            z = z * 2
        return z + u
""",
    "else": """\
        for i in range(self.n):
            z = z + w
            if self.again:
                w = v
            v = u
            u = self.side(x + i)
            z = z * 2
        else:
            z = z + v
        return z + w
""",
    "entered_pending": """\
        u = self.side(x)
        for i in range(self.n):
            z = z * 3
            z = z + w
            w = v
            v = u
            u = self.side(z)
        return z + u
""",
}

_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]
_WAIT = 'runtime.wait("m.Model.side.join")'


def _eager(source: str, again: bool, x: torch.Tensor) -> torch.Tensor:
    """The decorated source run as written (the decorators keep their meaning in eager mode)."""
    module = types.ModuleType("loop_fixpoint_eager")
    exec(compile(source, "<loop_fixpoint_eager>", "exec"), module.__dict__)  # noqa: S102 (the code under test)
    return module.Model(again, 5)(x)  # type: ignore[no-any-return]


def _check(body: str, target: str, again: bool) -> None:
    source = HEAD + body
    x = torch.randn(2, 3)
    code = transform_source(source, path="m.py", target=target)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = trace_graph(code, target, lambda m: m.Model(again, 5), (x,), eager_first=native).outputs
    torch.testing.assert_close(got, _eager(source, again, x))


def _lines(body: str) -> list[str]:
    code = transform_source(HEAD + body, path="m.py", target="portable")
    return [line.strip() for line in method_source(code, "forward").splitlines()]


def test_the_read_three_laps_later_waits() -> None:
    """The head holds ``w`` too: the wait for the call two laps back stands right before ``z = z + w``."""
    lines = _lines(SHAPES["shift"])
    at = lines.index("z = z + w")
    assert lines[at - 2 : at] == ["if side_forked:", _WAIT]


@pytest.mark.parametrize("target", _TARGETS)
def test_settled_race_free_and_exact(target: str) -> None:
    _check(SHAPES["shift"], target, False)


def test_unsettled_joins_at_the_end_of_each_lap(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the limit at 1 no loop with a call settles: the call still overlaps ``z = z * 2``, and its join
    stands at the end of the body, so nothing is pending at the head (and none before ``z = z + w``)."""
    monkeypatch.setattr(loop_fixpoint, "_LOOP_LIMIT", 1)
    lines = _lines(SHAPES["shift_work"])
    at = lines.index("z = z * 2")
    assert lines[at + 1 : at + 3] == ["if side_forked:", _WAIT] or lines[at + 1] == _WAIT
    assert _WAIT not in lines[: lines.index("z = z + w")]


@pytest.mark.parametrize("again", [False, True])
@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_unsettled_race_free_and_exact(monkeypatch: pytest.MonkeyPatch, shape: str, target: str, again: bool) -> None:
    monkeypatch.setattr(loop_fixpoint, "_LOOP_LIMIT", 1)
    _check(SHAPES[shape], target, again)


@pytest.mark.parametrize("again", [False, True])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_settled_shapes_race_free_and_exact(shape: str, again: bool) -> None:
    _check(SHAPES[shape], "portable", again)
