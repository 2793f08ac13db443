"""A manual call's inputs need no ``record_stream`` when the caller waits for its stream before allocating again.

vllm-ascend's shared expert records ``shared_done`` on its stream and the caller's ``add_shared`` waits for it
first: between the calls on the side stream and that wait, the caller's stream runs no op, so the memory of
what the side stream reads cannot go to an allocation of the caller's stream while it still reads it. Any op on
the caller's stream in between (``routed = torch.full(...)``, which would take the memory of ``x``), a computed
argument, or a wait that is guarded keeps the ``record_stream``. Each generated module is compiled with the race
checker, called from a caller that makes the input just before the call and allocates right after (as
``bench/sync_premise.py`` does).
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import after, on_stream, records


class Block(nn.Module):
    @records("ready")
    def prep(self, x):
        return x * 1

    @on_stream("s", sync="manual")
    @after("ready")
    def first(self, x):
        return x * 2

    @on_stream("s", sync="manual")
    @after("t_done")
    def first_after_t(self, x):
        return x * 2

    @on_stream("s", sync="manual")
    @records("done")
    def second(self, y):
        return y + 1

    @on_stream("t", sync="manual")
    @after("ready")
    @records("t_done")
    def make_t(self, x):
        return x * 4

    @on_stream("s", sync="manual")
    @after("ready")
    @records("done")
    def scale_in_place(self, g):
        g.mul_(2)
        return g

    @after("done")
    def add(self, a, b):
        return a + b

    @after("done", when="self.on")
    def add_guarded(self, a, b):
        return a + b

    def waits_first(self, x):
        x = self.prep(x)
        routed = x - 1
        y = self.first(x)
        out = self.second(y)
        return self.add(routed, out)

    def allocates_between(self, x):
        x = self.prep(x)
        y = self.first(x)
        out = self.second(y)
        routed = torch.full((2, 3), 5.0)
        return self.add(routed, out)

    def guarded_wait(self, x):
        x = self.prep(x)
        routed = x - 1
        y = self.first(x)
        out = self.second(y)
        return self.add_guarded(routed, out)

    def made_aside(self, x):
        x = self.prep(x)
        routed = x - 1
        z = self.make_t(x)
        y = self.first_after_t(z)
        out = self.second(y)
        return self.add(routed, out)

    def made_aside_again(self, x):
        x = self.prep(x)
        routed = x - 1
        z = self.make_t(x)
        y = self.first_after_t(z)
        z2 = self.make_t(x)
        out = self.second(y)
        return self.add(routed, out)

    def held_past_the_wait(self, x):
        g = self.prep(x)
        r = self.scale_in_place(g)
        h = x * 5
        return self.add(h, r)

    def not_read_at_the_wait(self, x):
        g = self.prep(x)
        r = self.scale_in_place(g)
        h = x * 5
        return self.add(h, h)


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.block, self.method, self.block.on = Block(), method, True

    def forward(self, x):
        out = getattr(self.block, self.method)(x.clone())
        return out + torch.ones_like(out)
"""


@pytest.mark.parametrize(("method", "kept"), [("made_aside", False), ("made_aside_again", True)])
def test_a_tensor_of_another_side_stream_that_issues_nothing_more_before_the_wait(method: str, kept: bool) -> None:
    """``z`` is made on "t" and read on "s": "t" allocates again only if a call on "t" comes before the wait."""
    code = transform_source(SOURCE, path="m.py", target="portable")
    assert ('runtime.record_stream(z, "s")' in method_source(code, method)) is kept
    x = torch.arange(6.0).reshape(2, 3)
    out = run_checked(code, "portable", lambda m: m.Caller(method), (x,))
    assert torch.equal(out, (x - 1) + (x * 4 * 2 + 1) + 1)


@pytest.mark.parametrize(("method", "kept"), [("held_past_the_wait", False), ("not_read_at_the_wait", True)])
def test_a_tensor_the_waiting_call_reads_is_alive_until_the_wait(method: str, kept: bool) -> None:
    """``scale_in_place`` returns its argument as it came: ``r`` is ``g``'s tensor, and ``add`` reads it after
    its wait for "done", so no allocation can take that memory while "s" writes it (the caller's ``x * 5``
    allocates in between)."""
    code = transform_source(SOURCE, path="m.py", target="portable")
    assert ('runtime.record_stream(g, "s")' in method_source(code, method)) is kept
    x = torch.arange(6.0).reshape(2, 3)
    out = run_checked(code, "portable", lambda m: m.Caller(method), (x,))
    expected = x * 5 + x * 2 if method == "held_past_the_wait" else x * 10
    assert torch.equal(out, expected + 1)


@pytest.mark.parametrize(
    ("method", "kept"), [("waits_first", False), ("allocates_between", True), ("guarded_wait", True)]
)
def test_a_wait_before_any_allocation_makes_record_stream_unneeded(method: str, kept: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    assert ('runtime.record_stream(x, "s")' in method_source(code, method)) is kept
    x = torch.arange(6.0).reshape(2, 3)
    out = run_checked(code, "portable", lambda m: m.Caller(method), (x,))
    routed = torch.full((2, 3), 5.0) if method == "allocates_between" else x - 1
    assert torch.equal(out, routed + (x * 2 + 1) + 1)
