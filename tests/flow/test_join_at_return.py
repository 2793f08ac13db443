"""A join right before the function returns keeps no result alive for the caller's stream: no call of the
function can allocate on the side stream after it. A ``return`` inside ``try`` runs the ``finally`` block after
it: the lowering does not count it as leaving, and a call there forks (everything was joined), so it does not
allocate before the caller's reads either. Both run under the race checker, called with inputs their caller
made right before."""

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
    def make(self, x):
        return x * 2, x * 5

    @on_stream("side")
    def again(self, v):
        return v * 3

    def plain(self, x):
        w, v = self.make(x)
        y = x + 1
        return w * y

    def through_finally(self, x):
        w, v = self.make(x)
        y = x + 1
        try:
            return w * y
        finally:
            t = self.again(v)
            u = v + 1
            self.tail = t * u

""" + caller_source()


@pytest.mark.parametrize("method", ["plain", "through_finally"])
def test_no_result_is_kept_at_the_return(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert "runtime.record_stream(w, runtime.current_stream())" not in body
    assert 'runtime.record("m.Model.again.fork")' in body or method == "plain"


@pytest.mark.parametrize("method", ["plain", "through_finally"])
def test_race_free_and_exact(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    torch.testing.assert_close(run_checked(code, "portable", lambda m: m.Caller(method), (x,)), (x * 2) * (x + 1))
