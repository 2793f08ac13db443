"""A side result that a ``for`` body reads first is joined once, before the loop (``loop_entry.py``).

DeepSeek-V4's kernel metadata (``corpus.cann_v4_compressor``) is made on a side stream and handed
to every layer by ``for layer in self.layers``: one wait before the loop, not one per iteration and
one more after it. Where the rule must not apply, the join stays in the loop: the body does other
work before the read (``late_read``: the side work overlaps it in the first iteration), its first
statement is a stream call that waits on its own stream (``relayed``), or the loop's header does
device work (``working_header``). A result made again inside the loop (``made_again``) is still
joined in the loop for the next iteration. Every case runs under the race checker, with zero, one
and three iterations, and equals the arithmetic done on one stream.
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
    def __init__(self, n):
        super().__init__()
        self.n = n

    @on_stream("meta")
    def make(self, x):
        return x * 2

    @on_stream("other")
    def use(self, m, h):
        return m + h

    def first_read(self, x):
        m = self.make(x)
        h = x + 1
        for i in range(self.n):
            h = h * m
        return h

    def late_read(self, x):
        m = self.make(x)
        h = x + 1
        for i in range(self.n):
            h = h + 3
            h = h * m
        return h

    def relayed(self, x):
        m = self.make(x)
        h = x + 1
        for i in range(self.n):
            h = self.use(m, h)
        return h

    def working_header(self, x):
        m = self.make(x)
        h = x + 1
        for row in (x * 5).split(1):
            h = h * m + row
        return h

    def made_again(self, x):
        m = self.make(x)
        h = x + 1
        for i in range(self.n):
            h = h * m
            m = self.make(h)
        return h + m

""" + caller_source()

WAIT = 'runtime.wait("m.Model.make.join")'


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_the_first_read_of_a_loop_body_is_joined_once_before_the_loop() -> None:
    body = _body("first_read")
    assert body.count(WAIT) == 1
    assert body.index(WAIT) < body.index("for i in range(self.n):")


@pytest.mark.parametrize("method", ["late_read", "working_header"])
def test_the_join_stays_in_the_loop_where_the_loop_runs_work_first(method: str) -> None:
    body = _body(method)
    loop = body.index("for ")
    assert body.index(WAIT) > loop  # in the body, after the work it overlaps in the first iteration


def test_a_stream_call_reading_first_waits_on_its_own_stream() -> None:
    body = _body("relayed")
    loop = body.index("for ")
    assert WAIT not in body[:loop] and "runtime.wait(" in body[loop:]


def test_a_result_made_again_in_the_loop_is_joined_in_the_loop() -> None:
    body = _body("made_again")
    loop = body.index("for ")
    assert body.index(WAIT) < loop and body.count(WAIT) >= 2  # the first before the loop, the next ones in it


def _expected(method: str, x: torch.Tensor, n: int) -> torch.Tensor:
    m, h = x * 2, x + 1
    if method == "working_header":
        for row in (x * 5).split(1):
            h = h * m + row
        return h
    for _ in range(n):
        if method == "late_read":
            h = h + 3
        h = m + h if method == "relayed" else h * m
        if method == "made_again":
            m = h * 2
    return h + m if method == "made_again" else h


@pytest.mark.parametrize("n", [0, 1, 3])
@pytest.mark.parametrize("method", ["first_read", "late_read", "relayed", "working_header", "made_again"])
def test_race_free_and_exact(method: str, n: int) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(3, 4)
    torch.testing.assert_close(
        run_checked(code, "portable", lambda mod: mod.Caller(method, n), (x,)), _expected(method, x, n)
    )
