"""A name that copies a reference holds the side stream's result surely only where everything it copies came from
that stream: ``a, b = q, g`` pairs ``a`` with ``q`` and ``b`` with the caller's ``g``; ``t = (q, g)`` holds both.

The next call on the side stream that reads ``b`` or ``t`` reads the caller's ``g``: it must wait for the caller's
stream (it skipped its fork before, a race the checker found). Where every copied value is the side stream's own
(``a, b = q, r``), the call needs no fork. Each runs under the race checker, called with an input its caller made
right before.
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
    @on_stream("side")
    def quant(self, x: torch.Tensor) -> torch.Tensor:
        return x * 3

    @on_stream("side")
    def shared(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a * 2 + b

    def paired(self, x):
        r = self.quant(x)
        q = self.quant(x)
        g = x * 7
        a, b = q, g
        h = x * 11
        out = self.shared(a, b)
        y = h * 2
        return out + y + r

    def packed(self, x):
        r = self.quant(x)
        q = self.quant(x)
        g = x * 7
        t = (q, g)
        h = x * 11
        out = self.shared(*t)
        y = h * 2
        return out + y + r

    def own(self, x):
        r = self.quant(x)
        q = self.quant(x)
        g = x * 7
        a, b = q, r
        h = x * 11
        out = self.shared(a, b)
        y = h * 2
        return out + y + g

""" + caller_source()


@pytest.mark.parametrize(("method", "forks"), [("paired", True), ("packed", True), ("own", False)])
def test_a_call_reading_a_copy_of_the_callers_value_waits_for_it(method: str, forks: bool) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert ('runtime.record("m.Model.shared.fork")' in body) is forks


@pytest.mark.parametrize("method", ["paired", "packed", "own"])
def test_race_free_and_exact(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    q, g, y = x * 3, x * 7, (x * 11) * 2
    want = q * 2 + q + y + g if method == "own" else q * 2 + g + y + q
    torch.testing.assert_close(run_checked(code, "portable", lambda m: m.Caller(method), (x,)), want)
