"""A side call reading state the caller's stream wrote since its stream's last fork forks anew (``written_state.py``).

State is no name the caller hands over (``self.side(self.buf)``: the object's memory lives on), so the fork rule
(``fork.py``: an earlier call on the stream forked, and the call reads only what its stream made) let the call go
without a fork after ``self.buf.add_(1)`` on the caller's stream: the side stream read the buffer with no wait after
the write. Each case below raced on main on every event target; each now forks after the write, race-free and exact.
A write before the earlier fork is ordered by that fork: no second fork there.

(Each method writes a buffer of its own where the class's other methods would change what the planner knows of
it: ``self.acc += 1`` is the only store of ``acc``, a sum of itself and a literal, which ``scalar_attributes.py``
reads as a number, and that hid ``bump(self.buf)``'s write from ``hoist.py`` in another method.)
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import EVERY_TARGET, NATIVE, eager_result, sync_counts

from codegen.driver.api import transform_source

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


def bump(t):
    t.add_(1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(3))
        self.register_buffer("bufs", torch.ones(3, 3))
        self.register_buffer("acc", torch.ones(3))

    @on_stream("side")
    def side(self, t):
        return t * 2

    @on_stream("side")
    def side_buf(self):
        return self.buf * 3

    def arg(self, x):
        a = self.side(x)
        self.buf.add_(1)
        b = self.side(self.buf)
        c = x.relu()
        return a + b + c

    def item(self, x):
        a = self.side(x)
        self.bufs[1].add_(1)
        b = self.side(self.bufs[1])
        c = x.relu()
        return a + b + c

    def augmented(self, x):
        a = self.side(x)
        self.acc += 1
        b = self.side(self.acc)
        c = x.relu()
        return a + b + c

    def stored(self, x):
        a = self.side(x)
        self.buf[0] = 5.0
        b = self.side(self.buf)
        c = x.relu()
        return a + b + c

    def helper(self, x):
        a = self.side(x)
        bump(self.buf)
        b = self.side(self.buf)
        c = x.relu()
        return a + b + c

    def body(self, x):
        a = self.side(x)
        self.buf.mul_(2)
        b = self.side_buf()
        c = x.relu()
        return a + b + c

    def looped(self, x):
        a = self.side(x)
        out = x
        for _ in range(2):
            b = self.side(self.buf)
            out = out.relu() + b
            self.buf.add_(1)
        return out + a

    def counted(self, x):
        a = self.side(x)
        out = x
        for i in range(2):
            self.bufs[i + 1].add_(1)
            b = self.side(self.bufs[i + 1])
            out = out.relu() + b
        return out + a

    def before(self, x):
        self.buf.add_(1)
        a = self.side(x)
        b = self.side(self.buf)
        c = x.relu()
        return a + b + c
""" + caller_source()

_RACED = ["arg", "item", "augmented", "stored", "helper", "body", "looped", "counted"]


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _sync(method: str, target: str) -> dict[str, int]:
    x = torch.randn(3)
    want = eager_result(SOURCE, method, x, runs=2 if target in NATIVE else 1)  # each call changes the buffers
    return sync_counts(_code(target), target, method, x, want)


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("method", [*_RACED, "before"])
def test_race_free_and_exact(method: str, target: str) -> None:
    assert _sync(method, target)["switch"] >= 1


@pytest.mark.parametrize("method", [m for m in _RACED if m not in ("looped", "counted")])
def test_the_call_after_the_write_forks(method: str) -> None:
    body = method_source(_code(), method)
    spelled = {"helper": "bump(self.buf)", "item": "self.bufs[1]", "augmented": "self.acc"}
    write = body.index(spelled.get(method, "self.buf"))
    fork = body.index('runtime.record("m.Model.side', write)
    assert fork < body.index("b = self.side", write)


def test_a_write_in_the_loop_forks_each_iteration() -> None:
    body = method_source(_code(), "looped")
    loop = body.index("for _ in range(2):")
    assert body.index('runtime.record("m.Model.side.fork")', loop) < body.index("b = self.side(self.buf)")


def test_a_write_before_the_earlier_fork_needs_no_second() -> None:
    body = method_source(_code(), "before")
    assert body.count('runtime.record("m.Model.side.fork")') == 1


def test_a_counted_item_written_in_the_loop_forks() -> None:
    """``self.bufs[i + 1]`` is state reached by a counted index (``counted_state.py``), not bound to a name first:
    the write before it in each iteration makes it fork."""
    body = method_source(_code(), "counted")
    write = body.index("self.bufs[i + 1].add_(1)")
    assert body.index('runtime.record("m.Model.side.fork")', write) < body.index("b = self.side(self.bufs[i + 1])")
    assert "t_1" not in body
