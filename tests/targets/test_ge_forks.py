"""GE: no fork edge where the caller's earlier work already comes before the call on every path (issue 26).

A call that reads only what earlier calls on its own stream made; a call whose only earlier work is a test that
compares (``if meta is None: return ...``, ``if n > 0:``); a call whose input, on every path back, is what the
caller's last work made (``u = None``, ``if self.on: u = self.up(x)``, ``if u is None: u = torch.cos(x)``). An
edge stays where the caller did work the call does not read, or read only part of (one name of ``a, b =``).
"""

from __future__ import annotations

import pytest
import torch

from npudsl.testing.targets import run_checked
from targets_util import transform

SOURCE = """
import torch
from npudsl import on_stream


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.on = True

    @on_stream("side", when="self.on")
    def up(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @on_stream("side", when="self.on")
    def down(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1

    def own_stream(self, x: torch.Tensor) -> torch.Tensor:
        u = self.up(x)
        h = x.sin()
        d = self.down(u)
        return d + h

    def quiet_tests(self, x: torch.Tensor, n: int) -> torch.Tensor:
        if n < 0:
            return x.new_zeros(x.shape)
        if n > 0 and self.on:
            u = self.up(x)
            return u + 1
        return x

    def every_path(self, x: torch.Tensor) -> torch.Tensor:
        u = None
        if self.on:
            u = self.up(x)
        if u is None:
            u = torch.cos(x)
        d = self.down(u)
        return d

    def not_read(self, x: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        d = self.down(x)
        return d + h

    def half_read(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2)
        d = self.down(a)
        return d + b

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.own_stream(x), self.quiet_tests(x, 1), self.every_path(x), self.not_read(x), self.half_read(x)
"""


def _method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    return code[start : code.find("\n    def ", start + 1)]


def _edges(body: str) -> int:
    return body.count("npu_wait_tensor") + body.count("torchair.ops.wait") + body.count("torchair.ops.record")


@pytest.mark.parametrize("name", ["own_stream", "quiet_tests", "every_path"])
def test_no_edge_where_earlier_work_already_comes_first(name: str) -> None:
    body = _method(transform(SOURCE, "ge"), name)
    assert "npu_stream_switch" in body and _edges(body) == 0, body


def test_an_edge_where_the_call_does_not_read_all_of_the_last_work() -> None:
    code = transform(SOURCE, "ge")
    assert "torchair.scope.npu_wait_tensor(x, h)" in _method(code, "not_read")
    assert "torchair.scope.npu_wait_tensor(a, b)" in _method(code, "half_read")


def test_race_free_and_exact() -> None:
    x = torch.randn(4, 8)
    a, b = x.chunk(2)
    want = (x * 2 + 1 + x.sin(), x * 2 + 1, x * 2 + 1, x + 1 + x.sin(), a + 1 + b)
    got = run_checked(transform(SOURCE, "ge"), "ge", lambda m: m.M(), (x,))
    for have, expected in zip(got, want, strict=True):
        torch.testing.assert_close(have, expected)
