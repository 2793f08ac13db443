"""A method called on an item of the object's module list (``self.layers[0].reset_running_stats()``) may write it.

``self.layers = nn.ModuleList([nn.BatchNorm1d(3) for _ in range(2)])``, then ``self.layers[0].reset_running_stats()``
on the caller's stream while a side call reads ``self.layers[0].running_mean``, or in the side body while the caller
reads it: the call's chain holds an item, so the method was not resolved and taken to write nothing (the race
checker on main: "read on stream 'side' ... and written in place on stream 'default' with no wait in between", and
"written in place on stream 'side' ... is read on stream 'default'"). The method is now read in the class every
element of the list holds (``codegen/index/elements.py``; torch's as its sources say): it writes the list's state
(``self.layers``, ``self.layers.*``), as a list whose element class nothing says; ``self.layers[0](x)`` is its
``forward``. Methods that write nothing (``nn.Linear``'s ``forward``) keep the overlap.
"""

from __future__ import annotations

import re

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
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.BatchNorm1d(3) for _ in range(2)])
        self.linears = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
        with torch.no_grad():
            self.layers[0].running_mean.fill_(2.0)
            self.linears[0].weight.fill_(2.0)

    @on_stream("side")
    def side_stats(self, x):
        return x * self.layers[0].running_mean

    @on_stream("side")
    def side_reset(self, x):
        self.layers[0].reset_running_stats()
        return x * 2

    @on_stream("side")
    def side_linear(self, x):
        return x * self.linears[0].weight[0]

    def reset_item(self, x):
        y = self.side_stats(x)
        z = x * 5
        self.layers[0].reset_running_stats()
        return y + z

    def item_forward(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = self.layers[0](z)
        return y + z + w * 0

    def reset_on_side(self, x):
        y = self.side_reset(x)
        z = x * 5 + self.layers[0].running_mean
        return y + z

    def linear_item(self, x):
        y = self.side_linear(x)
        z = x * 5
        w = self.linears[1](z)
        return y + z + w * 0
""" + caller_source()

WAITS = {"reset_item": "self.layers[0].reset_running_stats()", "item_forward": "w = self.layers[0](z)"}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", WAITS)
def test_the_item_call_waits_for_the_pending_call(method: str) -> None:
    body = _body(method)
    assert re.search(r'runtime\.wait\("m\.Model\.side_stats\.join"\)', body[: body.index(WAITS[method])]), body


def test_the_caller_reads_after_the_side_reset() -> None:
    body = _body("reset_on_side")
    assert 'runtime.stream("side"' not in body or re.search(
        r'runtime\.wait\("m\.Model\.side_reset\.join"\)\n\s+z = x \* 5 \+ self\.layers', body
    ), body


def test_an_item_writing_nothing_keeps_the_overlap() -> None:
    body = _body("linear_item")
    assert body.index('runtime.stream("side"') < body.index("w = self.linears[1](z)") < body.rindex("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WAITS, "reset_on_side", "linear_item"])
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    x = torch.randn(2, 3)
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,))
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
