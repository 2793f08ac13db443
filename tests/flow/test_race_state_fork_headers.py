"""State a compound statement's header writes makes a later side call fork anew (``header_statements.py``).

``written_state.py`` lets a call on a stream that already forked skip its fork unless the caller's stream wrote,
since that fork, state the call reads. It read only the statements that are not compound, so a write in a
``while`` test, a ``for`` loop's iterable, a ``with`` item, or an ``if`` test nested in a loop (``step``, ``fill``
and ``lock`` write ``self.buf``) went unseen: ``b = self.side(self.buf)`` read the buffer on the side stream
with no wait after the write. And a write in a ``case`` or ``except`` body was taken to stand in no loop (the
loops around a statement stopped at its handler or case), so the next iteration's call did not fork after it. Each
case below raced on main on every event target; each now forks after the write, race-free and exact.

A pending call across such a header (``b = self.side_buf()`` then ``if self.step():``; ``a = self.side(y)`` then
``for _ in bump(y):``, ``bump`` writing its argument; a call in a ``while`` body whose test writes what it reads
when it runs again) is joined before the header, as before a plain statement writing it (``header_joins.py``;
``helper_writes.py`` reads a header's helper calls): each raced on the previous main.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import EVERY_TARGET, NATIVE, TARGETS, eager_result, sync_counts

from codegen.driver.api import transform_source

SOURCE = """\
import contextlib

import torch
from torch import nn
from npudsl import on_stream


def bump(t):
    t.add_(1)
    return [1]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(3))

    @on_stream("side")
    def side(self, t):
        return t * 2

    @on_stream("side")
    def side_buf(self):
        return self.buf * 3

    def step(self):
        self.buf.add_(1)
        return True

    def fill(self):
        self.buf.mul_(2)
        return [1]

    @contextlib.contextmanager
    def lock(self):
        self.buf.add_(2)
        yield

    def in_while(self, x):
        a = self.side(x)
        c = x
        n = 0
        while n < 1 and self.step():
            c = c.relu()
            n += 1
        b = self.side(self.buf)
        d = x.sigmoid()
        return a + b + c + d

    def in_for(self, x):
        a = self.side(x)
        c = x
        for _ in self.fill():
            c = c.relu()
        b = self.side(self.buf)
        d = x.sigmoid()
        return a + b + c + d

    def in_with(self, x):
        a = self.side(x)
        with self.lock():
            c = x.relu()
        b = self.side(self.buf)
        d = x.sigmoid()
        return a + b + c + d

    def nested(self, x):
        a = self.side(x)
        c = x
        for _ in range(1):
            if x.shape[0] > 1:
                if self.step():
                    c = c.relu()
        b = self.side(self.buf)
        d = x.sigmoid()
        return a + b + c + d

    def in_case(self, x):
        a = self.side(x)
        out = x
        for i in range(2):
            b = self.side(self.buf)
            out = out.relu() + b
            match i:
                case 0:
                    self.buf.add_(1)
                case _:
                    pass
        return out + a

    def pending_if(self, x):
        b = self.side_buf()
        c = x
        if self.step():
            c = x.relu()
        d = x.sigmoid()
        return b + c + d

    def pending_for(self, x):
        y = x * 1
        a = self.side(y)
        c = x
        for _ in bump(y):
            c = c.relu()
        d = x.sigmoid()
        return a + c + d + y

    def pending_while(self, x):
        out = x
        n = 0
        while n < 2 and self.step():
            b = self.side_buf()
            out = out + x.relu()
            n += 1
        return out + b

    def pending_with(self, x):
        b = self.side_buf()
        with self.lock():
            c = x.relu()
        d = x.sigmoid()
        return b + c + d
""" + caller_source()

_RACED = ["in_while", "in_for", "in_with", "nested", "in_case"]
_HEADERS = {
    "in_while": "while n < 1 and self.step():",
    "in_for": "for _ in self.fill():",
    "in_with": "with self.lock():",
    "nested": "if self.step():",
}


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _sync(method: str, target: str) -> dict[str, int]:
    x = torch.randn(3)
    want = eager_result(SOURCE, method, x, runs=2 if target in NATIVE else 1)  # each call changes the buffer
    return sync_counts(_code(target), target, method, x, want)


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("method", _RACED)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert _sync(method, target)["switch"] >= 1


@pytest.mark.parametrize("method", _HEADERS)
def test_the_call_after_the_header_forks(method: str) -> None:
    body = method_source(_code(), method)
    header = body.index(_HEADERS[method])
    assert body.index('runtime.record("m.Model.side.fork")', header) < body.index("b = self.side(self.buf)")
    assert body.count('runtime.record("m.Model.side.fork")') == 2


def test_a_write_in_a_case_body_forks_the_next_iteration() -> None:
    """A ``case`` (or ``except``) body's statements are in the loops around its ``match`` (or ``try``)."""
    body = method_source(_code(), "in_case")
    loop = body.index("for i in range(2):")
    assert body.index('runtime.record("m.Model.side.fork")', loop) < body.index("b = self.side(self.buf)")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["pending_if", "pending_for", "pending_with", "pending_while"])
def test_a_pending_call_across_a_writing_header(method: str, target: str) -> None:
    _sync(method, target)


def test_the_join_comes_before_the_header() -> None:
    """The side call overlaps ``c = x`` and is joined before ``if self.step():``, not after it."""
    body = method_source(_code(), "pending_if")
    assert body.index("c = x") < body.index('runtime.wait("m.Model.side_buf.join")') < body.index("if self.step():")


def test_a_while_test_joins_at_the_end_of_its_body() -> None:
    """The test runs again before the next iteration: the call its body made is joined before it."""
    body = method_source(_code(), "pending_while")
    assert body.index("n += 1") < body.index('runtime.wait("m.Model.side_buf.join")') < body.index("return")
