"""An input read again after the ``if`` whose branch joins the call needs no ``record_stream``.

``y = self.side(q)`` in one branch of an ``if``, joined in that branch; the caller reads ``q`` after the ``if``:
the stream's reads of ``q`` are ordered before that read by the join, and ``q`` lives until then, so keeping it
for the side stream is one call too many (sglang's DSA prefill, wt33d). Where the read after the ``if`` is only
on the other path (``q`` rebound in the joining branch after the join), or a loop's body ends there (the next
iteration need not read it), the keep stays. Every case runs race-checked on both paths and equals the same
arithmetic on one stream.
"""

from __future__ import annotations

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
    def __init__(self, on=True):
        super().__init__()
        self.on = on

    @on_stream("side")
    def side(self, q):
        return q * 2

    def read_after(self, x):
        q = x + 1
        if self.on:
            z = x - 1
            y = self.side(q)
            w = x * 3
            y = y + w
        else:
            y = x * 5
            z = x - 2
        return q.sum() + y + z

    def rebound_after_join(self, x):
        q = x + 1
        if self.on:
            y = self.side(q)
            w = x * 3
            y = y + w
            q = x * 7
        else:
            y = x * 5
        return q.sum() + y

    def in_a_loop(self, x):
        q = x + 1
        acc = x
        for i in range(2):
            if self.on:
                y = self.side(q)
                w = x * 3
                acc = acc + y + w
        return acc
""" + caller_source()


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_a_read_after_the_if_needs_no_keep() -> None:
    assert "record_stream(q" not in _body("read_after")


@pytest.mark.parametrize("method", ["rebound_after_join", "in_a_loop"])
def test_the_keep_stays(method: str) -> None:
    assert 'runtime.record_stream(q, "side")' in _body(method)


def _want(method: str, x: torch.Tensor, on: bool) -> torch.Tensor:
    q = x + 1
    if method == "read_after":
        return q.sum() + (q * 2 + x * 3 if on else x * 5) + (x - 1 if on else x - 2)
    if method == "rebound_after_join":
        return ((x * 7).sum() + q * 2 + x * 3) if on else (q.sum() + x * 5)
    return x + 2 * (q * 2 + x * 3) if on else x


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("method", ["read_after", "rebound_after_join", "in_a_loop"])
def test_race_free_and_exact(method: str, target: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method, on), (x,))
    torch.testing.assert_close(got, _want(method, x, on))
