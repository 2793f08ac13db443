"""A call under another guard, which may run on the caller's stream, before a call that writes what it reads.

GE: a call's fork edge skips an earlier planned call under another guard (``ge_last.py``); that is no race,
since GE's graph orders every access of one memory by data.

``if self.a: u = self.first(y)`` then ``if self.b: v = self.second(y)`` (and the same with the guards on the
callees, ``when="self.a"`` / ``when="self.b"``): the search for ``second``'s edge passes ``first`` whatever its
guard, so with ``self.a`` off ``first``'s work on the caller's stream is not behind the edge. GE's graph is
functional (an in-place write makes a new value that every later use names), so it orders ``second``'s write
of ``y`` after ``first``'s read, and ``second``'s read after ``first``'s write, on any streams: the stand-in's
engine edges (``data_edges="engine"``) model that.

Portable plans joins, and there it raced: ``second`` writes ``y`` in place (its callee's ``t.add_(1)``) while
``first`` may still read it on ``s1``; the analysis counted the callee's write as a new value of ``y`` for later
readers, not as a write that must wait for earlier ones. It now joins ``first`` before ``second`` (a call that
only reads ``y`` still overlaps it). Each case runs under the race checker with every guard value, on GE and on
portable, and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, a: bool, b: bool):
        super().__init__()
        self.a, self.b = a, b
        self.register_buffer("buf", torch.ones(4, 3))

    @on_stream("s1", when="self.a")
    def first(self, t: torch.Tensor) -> torch.Tensor:
        return t * 2

    @on_stream("s1", when="self.a")
    def first_writes(self, t: torch.Tensor) -> torch.Tensor:
        t.mul_(2)
        self.buf.add_(1)
        return t * 1

    @on_stream("s2", when="self.b")
    def second(self, t: torch.Tensor) -> torch.Tensor:
        t.add_(1)
        return t * 1

    @on_stream("s2", when="self.b")
    def second_reads(self, t: torch.Tensor) -> torch.Tensor:
        return t + self.buf

    @on_stream("s1")
    def plain(self, t: torch.Tensor) -> torch.Tensor:
        return t * 2

    def read_then_write(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 3
        w = x * 5
        u = self.first(y)
        w = w * 2
        v = self.second(y)
        return u + v + w

    def read_then_read(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 3
        w = x * 5
        u = self.first(y)
        v = self.second_reads(y)
        return u + v + w

    def write_then_read(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 3
        w = x * 5
        u = self.first_writes(y)
        v = self.second_reads(y)
        return u + v + w

    def under_ifs(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 3
        w = x * 5
        u = y * 2
        if self.a:
            u = self.plain(y)
        if self.b:
            w = self.second(y)
        return u + w
"""

CALLER = """
""" + caller_source()


def _expected(method: str, x: torch.Tensor, b: bool) -> torch.Tensor:
    y, w = x * 3, x * 5
    if method == "read_then_write":
        return y * 2 + (y + 1) + w * 2
    if method == "read_then_read":
        return y * 2 + (y + 1) + w
    if method == "write_then_read":
        return y * 2 + (y * 2 + 2) + w
    return y * 2 + ((y + 1) if b else w)


@pytest.mark.parametrize(("a", "b"), list(itertools.product([True, False], repeat=2)))
@pytest.mark.parametrize("target", ["ge", "portable"])
@pytest.mark.parametrize("method", ["read_then_write", "read_then_read", "write_then_read", "under_ifs"])
def test_race_free_and_exact(method: str, target: str, a: bool, b: bool) -> None:
    code = transform_source(SOURCE + CALLER, path="m.py", target=target)
    x = torch.randn(4, 3)
    got = run_checked(code, target, lambda m: m.Caller(method, a, b), (x,))
    torch.testing.assert_close(got, _expected(method, x, b))


def test_the_edge_passes_the_call_under_another_guard() -> None:
    """The case the search does not stop at: ``second`` waits for ``w`` (made before ``first``), not for ``first``."""
    code = transform_source(SOURCE + CALLER, path="m.py", target="ge")
    assert "torchair.scope.npu_wait_tensor(y, w)" in code


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE + CALLER, path="m.py", target="portable"), method)


def test_a_call_that_writes_what_an_earlier_call_reads_waits_for_it() -> None:
    body = _body("read_then_write")
    assert body.index('runtime.wait("m.Model.first.join")') < body.index("v = self.second(y)")


def test_a_call_that_only_reads_it_still_overlaps() -> None:
    body = _body("read_then_read")
    assert body.index("v = self.second_reads(y)") < body.index('runtime.wait("m.Model.first.join")')
