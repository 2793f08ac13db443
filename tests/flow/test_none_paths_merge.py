"""A name that one path binds to the side stream's result and another to the caller's holds the side stream's
result on no path for sure: the next call on that stream still forks for it, and keeps it alive.

``q = self.quant(x)`` then ``if self.large: q = g * 5``: where ``self.large`` holds, ``q`` is the caller's
(made after the quantization's fork), so the call that reads it must wait for the caller's stream
(``state.Pending.unsure``). Where no path rebinds it, the call needs no fork. Both run under the race checker.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, large: bool):
        super().__init__()
        self.large = large

    @on_stream("side")
    def quant(self, x: torch.Tensor) -> torch.Tensor:
        return x * 3

    @on_stream("side")
    def shared(self, q: torch.Tensor) -> torch.Tensor:
        return q * 2

    def rebound(self, x):
        r = self.quant(x)
        q = self.quant(x)
        g = x * 7
        if self.large:
            q = g * 5
        h = x * 11
        out = self.shared(q)
        y = h * 2
        return out + y + r

    def kept(self, x):
        r = self.quant(x)
        q = self.quant(x)
        g = x * 7
        if self.large:
            g = g * 5
        h = x * 11
        out = self.shared(q)
        y = h * 2
        return out + y + r + g

""" + caller_source()


def _method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    return code[start : code.find("\n    def ", start + 1)]


def test_a_name_another_path_rebinds_is_waited_for() -> None:
    body = _method(transform_source(SOURCE, path="m.py", target="portable"), "rebound")
    assert 'runtime.record("m.Model.shared.fork")' in body
    assert 'runtime.record_stream(q, "side")' in body


def test_a_name_no_path_rebinds_needs_no_fork() -> None:
    body = _method(transform_source(SOURCE, path="m.py", target="portable"), "kept")
    assert "m.Model.shared.fork" not in body


@pytest.mark.parametrize("large", [True, False])
@pytest.mark.parametrize("method", ["rebound", "kept"])
def test_race_free_and_exact(method: str, large: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    got = run_checked(code, "portable", lambda m: m.Caller(method, large), (x,))
    g = x * 7 * 5 if large else x * 7
    if method == "rebound":
        expected = (g if large else x * 3) * 2 + (x * 11) * 2 + x * 3
    else:
        expected = (x * 3) * 2 + (x * 11) * 2 + x * 3 + g
    torch.testing.assert_close(got, expected)
